"""Instance prices per region and market, each with its date and source: the one place prices are read from.

Layers, newest last: the dated snapshot shipped in this package (``snapshot.json``, rebuilt by
scripts/build_price_snapshot.py), then the local cache `gpucloud prices refresh` writes (gpucloud.prices.cache).
The catalog (gpucloud.catalog) stays a leaf of GPU facts; this module reads it for specs and family discounts.

A type or region without a figure is unpriced with the reason; a price is never borrowed from another region.
Stdlib + catalog only: the cost engine and the policy pack import it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from gpucloud.catalog import Catalog, get_catalog
from gpucloud.catalog.capacity_blocks import capacity_block_offering
from gpucloud.prices.cache import region_prices

SNAPSHOT_SCHEMA: Final = "gpucloud.prices.snapshot/v1"
# The API each cached figure comes from (gpucloud.prices.refresh's source names).
_CACHE_SOURCE: Final = {
    "on_demand_usd": "aws-price-list-api",
    "reserved_1y_usd": "aws-price-list-api",
    "reserved_3y_usd": "aws-price-list-api",
    "spot_usd": "ec2-spot-price-history",
    "capacity_block_usd": "ec2-capacity-block-offerings",
}
_SNAPSHOT_FILE: Final = "snapshot.json"
# The markets a figure can be asked for, as named in reasons and JSON.
MARKETS: Final = ("on_demand", "spot", "capacity_block", "reserved_1y", "reserved_3y")


@dataclass(frozen=True, slots=True)
class Figure:
    """One hourly USD rate with where it came from. ``estimated`` marks a rate derived from a planning discount
    rather than read from a price list."""

    usd: float
    source: str
    as_of: str | None
    estimated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"usd": self.usd, "source": self.source, "as_of": self.as_of, "estimated": self.estimated}


@dataclass(frozen=True, slots=True)
class RegionalRates:
    """Every rate gpucloud knows for one instance type in one region; ``reasons`` says why a market is None."""

    instance_type: str
    region: str
    on_demand: Figure | None
    spot: Figure | None
    capacity_block: Figure | None
    reserved_1y: Figure | None
    reserved_3y: Figure | None
    reasons: Mapping[str, str] = field(default_factory=dict)
    # From a refresh of the spot price history: min/median/max over AZs, samples, per-AZ latest prices.
    spot_stats: Mapping[str, Any] | None = None
    # From a refresh of DescribeInstanceTypeOfferings: the AZs offering the type (None: not refreshed).
    availability_zones: tuple[str, ...] | None = None

    def get(self, market: str) -> Figure | None:
        if market not in MARKETS:
            raise ValueError(f"market {market!r} is not one of {list(MARKETS)}")
        value: Figure | None = getattr(self, market)
        return value

    def reason(self, market: str) -> str:
        return self.reasons.get(market, f"no {market.replace('_', '-')} rate for {self.instance_type}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"instance_type": self.instance_type, "region": self.region}
        for market in MARKETS:
            fig = self.get(market)
            out[market] = fig.to_json() if fig else None
        out["unpriced"] = dict(self.reasons)
        if self.spot_stats is not None:
            out["spot_stats"] = dict(self.spot_stats)
        if self.availability_zones is not None:
            out["availability_zones"] = list(self.availability_zones)
        return out


class PriceBook:
    """The snapshot plus cache overlays, answering `rates(instance_type, region)`."""

    def __init__(
        self,
        snapshot: Mapping[str, Any],
        catalog: Catalog,
        overlays: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    ) -> None:
        if snapshot.get("schema") != SNAPSHOT_SCHEMA:
            raise ValueError(f"price snapshot schema {snapshot.get('schema')!r} is not {SNAPSHOT_SCHEMA!r}")
        self.catalog = catalog
        self.sources: dict[str, Mapping[str, Any]] = dict(snapshot.get("sources") or {})
        self.commitment_basis: dict[str, str] = dict(snapshot.get("commitment_basis") or {})
        self._regions: dict[str, Mapping[str, Any]] = dict(snapshot.get("regions") or {})
        self._overlays = overlays
        self._memo: dict[tuple[str, str], RegionalRates] = {}

    @property
    def regions(self) -> tuple[str, ...]:
        """Regions the shipped snapshot prices."""
        return tuple(self._regions)

    def snapshot_region(self, region: str) -> Mapping[str, Any] | None:
        """The shipped snapshot's table for a region (type -> figures), or None when it holds none."""
        return self._regions.get(region)

    def source_date(self, source: str) -> str | None:
        """The date of a snapshot source id (None when undated or unknown)."""
        as_of = (self.sources.get(source) or {}).get("as_of")
        return str(as_of) if as_of else None

    def _overlay(self, region: str) -> Mapping[str, Mapping[str, Any]]:
        if self._overlays is not None:
            return self._overlays.get(region) or {}
        return region_prices(region)

    def _figure(self, entry: Any) -> Figure | None:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("usd"), int | float):
            return None
        source = str(entry.get("source"))
        return Figure(float(entry["usd"]), source, (self.sources.get(source) or {}).get("as_of"))

    def rates(self, instance_type: str, region: str) -> RegionalRates:
        key = (instance_type, region)
        memo = self._memo.get(key)
        if memo is None:
            memo = self._memo[key] = self._rates(instance_type, region)
        return memo

    def _rates(self, instance_type: str, region: str) -> RegionalRates:
        reasons: dict[str, str] = {}
        table = self._regions.get(region)
        entry: Mapping[str, Any] = (table or {}).get(instance_type) or {}
        cached = self._overlay(region).get(instance_type) or {}
        cached_date = cached.get("price_date")
        cached_source = str(cached.get("price_source") or "price-cache")
        spec = self.catalog.find(instance_type)
        zones = cached.get("availability_zones")
        if isinstance(zones, list) and not zones:
            # A refresh found no AZ of the region offering the type: nothing in the snapshot can be bought here.
            gone = f"{instance_type} is not offered in {region} (DescribeInstanceTypeOfferings, {cached_date})"
            return RegionalRates(
                instance_type, region, None, None, None, None, None, dict.fromkeys(MARKETS, gone), None, ()
            )

        parts = cached_source.split("+")

        def from_cache(key: str) -> Figure | None:
            value = cached.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                return None
            # A refresh records its APIs joined by "+"; each figure names the one it came from.
            wanted = _CACHE_SOURCE.get(key, "")
            known = set(_CACHE_SOURCE.values()) | {"ec2-offerings"}
            source = wanted if wanted and set(parts) <= known else cached_source
            return Figure(float(value), source, cached_date if isinstance(cached_date, str) else None)

        if table is None:
            missing = (
                f"the shipped price snapshot has no prices for region {region}; "
                f"run `gpucloud prices refresh --region {region}`"
            )
        else:
            missing = (
                f"{instance_type} has no price in {region} in the shipped snapshot (not sold there per its "
                f"sources); run `gpucloud prices refresh --region {region} --types {instance_type}` to check"
            )
        on_demand = from_cache("on_demand_usd") or self._figure(entry.get("on_demand"))
        if on_demand is None:
            reasons["on_demand"] = (
                f"{instance_type} in {region}: {entry['no_on_demand']}" if entry.get("no_on_demand") else missing
            )
        capacity_block = from_cache("capacity_block_usd") or self._figure(entry.get("capacity_block"))
        if capacity_block is None:
            if spec is not None and not spec.capacity_block:
                reasons["capacity_block"] = f"{instance_type} is not offered through Capacity Blocks"
            else:
                offering = capacity_block_offering(instance_type, region, sold_as_blocks=True)
                # Listed in the region but unpriced, or undecided there: say which, with the sources' regions.
                where = (
                    f"AWS lists {instance_type} Capacity Blocks in {region}"
                    if offering.status == "offered"
                    else offering.reason.split(" (gpucloud/catalog")[0]
                )
                reasons["capacity_block"] = (
                    f"no Capacity Block rate for {instance_type} in {region} in the shipped snapshot ({where}); "
                    f"run `gpucloud prices refresh --region {region}` (DescribeCapacityBlockOfferings)"
                )
        reserved_1y = from_cache("reserved_1y_usd") or self._figure(entry.get("reserved_1y"))
        reserved_3y = from_cache("reserved_3y_usd")
        fam = self.catalog.families.get(spec.family) if spec is not None else None
        if reserved_1y is None and on_demand is not None and fam is not None:
            reserved_1y = Figure(
                round(on_demand.usd * (1 - fam.reserved_1y), 6),
                f"{on_demand.source}+family-discount",
                on_demand.as_of,
                True,
            )
        if reserved_3y is None and on_demand is not None and fam is not None:
            reserved_3y = Figure(
                round(on_demand.usd * (1 - fam.reserved_3y), 6),
                f"{on_demand.source}+family-discount",
                on_demand.as_of,
                True,
            )
        for market, fig in (("reserved_1y", reserved_1y), ("reserved_3y", reserved_3y)):
            if fig is None:
                reasons[market] = (
                    reasons.get("on_demand", missing)
                    if on_demand is None
                    else f"no {market} rate or family discount for {instance_type}"
                )
        spot: Figure | None = None
        if spec is not None and not spec.spot:
            reasons["spot"] = f"{instance_type} is not sold as spot"
        else:
            spot = from_cache("spot_usd")
            if spot is None and on_demand is not None and fam is not None:
                spot = Figure(
                    round(on_demand.usd * (1 - fam.spot_discount), 6),
                    f"{on_demand.source}+family-spot-discount",
                    on_demand.as_of,
                    True,
                )
            if spot is None:
                reasons["spot"] = (
                    f"no spot price for {instance_type} in {region}: refresh the spot price history "
                    f"(`gpucloud prices refresh --region {region} --types {instance_type}`)"
                    if on_demand is not None
                    else reasons["on_demand"]
                )
        stats = cached.get("spot_stats")
        return RegionalRates(
            instance_type=instance_type,
            region=region,
            on_demand=on_demand,
            spot=spot,
            capacity_block=capacity_block,
            reserved_1y=reserved_1y,
            reserved_3y=reserved_3y,
            reasons=reasons,
            spot_stats=stats if isinstance(stats, Mapping) else None,
            availability_zones=tuple(str(z) for z in zones) if isinstance(zones, list) else None,
        )


def load_snapshot(path: str | Path | None = None) -> dict[str, Any]:
    if path is None:
        text = resources.files(__package__ or "gpucloud.prices").joinpath(_SNAPSHOT_FILE).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@functools.cache
def get_price_book() -> PriceBook:
    """The shipped snapshot with the local price cache on top; call ``get_price_book.cache_clear()`` after a
    refresh in the same process."""
    return PriceBook(load_snapshot(), get_catalog())


def region_rates(instance_type: str, region: str) -> RegionalRates:
    """Shorthand for ``get_price_book().rates(instance_type, region)``."""
    return get_price_book().rates(instance_type, region)
