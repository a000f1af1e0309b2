"""Is an instance type offered in a region? The answer, its source and its date, for conformance and the cost.

Two sources, the fresher first:

* **refreshed**: ``gpucloud prices offerings`` (or ``gpucloud prices refresh``) asked EC2
  DescribeInstanceTypeOfferings (LocationType ``region`` and ``availability-zone``) and recorded, per type, the
  AZs that offer it in the local price cache (``availability_zones``; an empty list: not offered), dated;
* **shipped**: the price snapshot (gpucloud/prices/snapshot.json). A type with a figure in a region's table
  (On-Demand, reserved or Capacity Block, or a Capacity-Blocks-only note) is sold there per that figure's source; a
  catalog type absent from a region the snapshot holds is not sold there per the region's sources, at their date.

Absence is proof only from EC2's own list refreshed within ``FRESH_DAYS`` (AWS adds types to regions, and a price
list may simply not price a type it sells): ``proves_absence`` says when a reader may make it an error; otherwise a
warning naming the source and its date.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

from gpucloud.prices.book import PriceBook, get_price_book
from gpucloud.prices.cache import region_prices, write_cache

# Data this many days old or newer proves absence; older data only suggests it.
FRESH_DAYS: Final = 90
API: Final = "EC2 DescribeInstanceTypeOfferings"
OFFERINGS_SOURCE: Final = "ec2-offerings"
_FIGURES: Final = ("on_demand", "reserved_1y", "capacity_block")


@dataclass(frozen=True)
class Offering:
    instance_type: str
    region: str
    offered: bool | None  # None: no data for this type in this region
    source: str  # what said so
    as_of: str | None  # the data's date (None: undated)
    zones: tuple[str, ...] | None = None  # the AZs that offer it, when a refresh recorded them

    def age_days(self, today: date) -> int | None:
        if self.as_of is None:
            return None
        try:
            return (today - date.fromisoformat(self.as_of[:10])).days
        except ValueError:
            return None

    def fresh(self, today: date) -> bool:
        age = self.age_days(today)
        return age is not None and age <= FRESH_DAYS

    def proves_absence(self, today: date) -> bool:
        """Only EC2's own offering list, refreshed within FRESH_DAYS, proves a type is not sold in a region: a price
        list that lacks a type may just not price it (the shipped snapshot has no figure for types AWS does sell,
        g7e in eu-central-1 for one)."""
        return self.offered is False and self.source == API and self.fresh(today)

    def describe(self) -> str:
        dated = f", {self.as_of}" if self.as_of else ", undated"
        verb = {True: "offered", False: "not offered", None: "of unknown offering"}[self.offered]
        return f"{self.instance_type} is {verb} in {self.region} ({self.source}{dated})"


def offering(
    instance_type: str, region: str, book: PriceBook | None = None, cache: Mapping[str, Any] | None = None
) -> Offering:
    """What the freshest data says about `instance_type` in `region`."""
    entries = cache if cache is not None else region_prices(region)
    entry = entries.get(instance_type) or {}
    zones = entry.get("availability_zones")
    if isinstance(zones, list):
        return Offering(instance_type, region, bool(zones), API, entry.get("price_date"), tuple(str(z) for z in zones))
    book = book or get_price_book()
    table = book.snapshot_region(region)
    if table is None:
        return Offering(instance_type, region, None, f"the shipped price snapshot holds no {region} table", None)
    found = table.get(instance_type)
    if isinstance(found, Mapping):
        for market in _FIGURES:
            figure = found.get(market)
            if isinstance(figure, Mapping):
                source = str(figure.get("source"))
                return Offering(instance_type, region, True, f"price snapshot: {source}", book.source_date(source))
        if found.get("no_on_demand"):
            return Offering(instance_type, region, True, "price snapshot", _newest(book, table))
    if book.catalog.find(instance_type) is None:
        # Outside the catalog the snapshot prices nothing, so its absence says nothing.
        return Offering(instance_type, region, None, "not a catalog type: the snapshot does not cover it", None)
    sources = sorted({str(f.get("source")) for e in table.values() if isinstance(e, Mapping) for f in _figs(e)})
    return Offering(
        instance_type,
        region,
        False,
        f"absent from the price snapshot's {region} table ({', '.join(sources)})",
        _newest(book, table),
    )


def _figs(entry: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    return (f for m in _FIGURES if isinstance(f := entry.get(m), Mapping))


def _newest(book: PriceBook, table: Mapping[str, Any]) -> str | None:
    """The date of the region table's newest source: absence is as old as the newest list it is missing from."""
    dates = [
        d
        for e in table.values()
        if isinstance(e, Mapping)
        for f in _figs(e)
        if (d := book.source_date(str(f.get("source")))) is not None
    ]
    return max(dates) if dates else None


# ---- refresh ---------------------------------------------------------------------------------------------------


def fetch_offerings(ec2: Any, instance_types: Sequence[str]) -> dict[str, list[str] | None]:
    """Per type: the AZs of the client's region that offer it ([] when the region does not offer it; None when the
    region offers it but no AZ was listed)."""
    wanted = list(instance_types)
    in_region: set[str] = set()
    zones: dict[str, set[str]] = {t: set() for t in wanted}
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    filters = [{"Name": "instance-type", "Values": wanted}]
    for page in paginator.paginate(LocationType="region", Filters=filters):
        in_region.update(str(row["InstanceType"]) for row in page.get("InstanceTypeOfferings", []))
    for page in paginator.paginate(LocationType="availability-zone", Filters=filters):
        for row in page.get("InstanceTypeOfferings", []):
            if row.get("InstanceType") in zones:
                zones[str(row["InstanceType"])].add(str(row["Location"]))
    return {t: (sorted(zones[t]) or None) if t in in_region else [] for t in wanted}


def refresh_offerings(
    region: str,
    instance_types: Sequence[str],
    ec2: Any,
    *,
    now: datetime | None = None,
    cache_file: Path | None = None,
) -> dict[str, Any]:
    """Ask EC2 which of `instance_types` `region` offers and record it (dated) in the local price cache."""
    now = now or datetime.now(UTC)
    found = fetch_offerings(ec2, instance_types)
    today = now.date().isoformat()
    entries = {
        t: {"availability_zones": z, "price_date": today, "price_source": OFFERINGS_SOURCE}
        for t, z in found.items()
        if z is not None
    }
    path = write_cache(region, entries, now.isoformat(timespec="seconds"), cache_file) if entries else None
    return {
        "region": region,
        "refreshed_at": now.isoformat(timespec="seconds"),
        "cache_file": str(path) if path else None,
        "offered": {t: z for t, z in found.items() if z},
        "not_offered": sorted(t for t, z in found.items() if z == []),
    }
