"""What an instance type costs in a region, on each market: the catalog's types from the regional price book,
the CPU types from the service rate table or a refresh. The one resolution the cost engine prices with and the
OpenCost export reads (a component may import this layer: stdlib, catalog and prices only)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpucloud.catalog import Catalog, get_catalog, is_valid_ec2_instance_type
from gpucloud.prices import rates
from gpucloud.prices.book import PriceBook, RegionalRates, get_price_book, load_snapshot
from gpucloud.prices.cache import region_prices

__all__ = ["InstanceRates", "RateResolver", "on_demand_rates"]


@dataclass(frozen=True, slots=True)
class InstanceRates:
    on_demand: float | None
    spot: float | None
    capacity_block: float | None
    # Why a market has no rate (keys as in gpucloud.prices.book.MARKETS).
    reasons: Mapping[str, str] = field(default_factory=dict)
    # The published 1-year rate (Standard RI, No Upfront) in the region, when the snapshot or a refresh has one.
    reserved_1y: float | None = None
    source: str | None = None
    as_of: str | None = None
    # (source, as_of) per market when it differs from the On-Demand figure's (a refreshed spot price).
    origins: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)

    def origin(self, market: str) -> tuple[str | None, str | None]:
        return self.origins.get(market, (self.source, self.as_of))


def _from_book(found: RegionalRates) -> InstanceRates:
    on_demand, spot = found.on_demand, found.spot
    published_1y = found.reserved_1y if found.reserved_1y is not None and not found.reserved_1y.estimated else None
    first = on_demand or spot or found.capacity_block
    return InstanceRates(
        on_demand.usd if on_demand else None,
        spot.usd if spot else None,
        found.capacity_block.usd if found.capacity_block else None,
        reasons=dict(found.reasons),
        reserved_1y=published_1y.usd if published_1y else None,
        source=first.source if first else None,
        as_of=first.as_of if first else None,
        origins={
            market: (fig.source, fig.as_of)
            for market, fig in (("spot", spot), ("capacity-block", found.capacity_block))
            if fig is not None
        },
    )


class RateResolver:
    """Instance rates for one region, memoised."""

    def __init__(self, region: str, catalog: Catalog | None = None, book: PriceBook | None = None) -> None:
        self.region = region
        self.catalog = catalog or get_catalog()
        self.book = book or (
            get_price_book() if self.catalog is get_catalog() else PriceBook(load_snapshot(), self.catalog)
        )
        self.cpu_cache = region_prices(region)
        self.service = rates.region_rates(region)
        self._memo: dict[str, InstanceRates | str] = {}

    def of(self, instance_type: str) -> InstanceRates | str:
        """The rates for a type in the region, or the reason there are none."""
        memo = self._memo.get(instance_type)
        if memo is not None:
            return memo
        result: InstanceRates | str
        if instance_type in self.catalog:
            result = _from_book(self.book.rates(instance_type, self.region))
        elif instance_type in self.cpu_cache or rates.cpu_key(instance_type) in self.service:
            cached = self.cpu_cache.get(instance_type, {})
            listed = self.service.get(rates.cpu_key(instance_type))
            on_demand = cached.get("on_demand_usd", listed.usd if listed else None)
            refreshed = (str(cached.get("price_source")), str(cached.get("price_date")))
            # (source, as_of) of the rate table's On-Demand figure when the cache does not override it.
            table = None if "on_demand_usd" in cached or listed is None else (listed.source, listed.as_of)
            result = InstanceRates(
                on_demand,
                cached.get("spot_usd"),
                None,
                reasons={
                    "on_demand": f"no On-Demand price for {instance_type} in {self.region}",
                    "spot": f"no spot price for {instance_type} in {self.region}: CPU spot prices are not "
                    f"estimated; run `gpucloud prices refresh --region {self.region} --types {instance_type}`",
                    "capacity_block": f"{instance_type} is not offered through Capacity Blocks",
                },
                source=(table or refreshed)[0],
                as_of=(table or refreshed)[1],
                # A spot price only ever comes from the refresh, so it names the refresh even beside the table's
                # On-Demand rate.
                origins={"spot": refreshed},
            )
        elif not is_valid_ec2_instance_type(instance_type):
            result = f"{instance_type!r} is not an EC2 instance type"
        elif instance_type in rates.CPU_TYPES:
            result = rates.missing_reason(self.region, rates.cpu_key(instance_type), f"{instance_type} On-Demand")
        else:
            result = (
                f"{instance_type} is not in the gpucloud catalog or the cost rate table; "
                f"run `gpucloud prices refresh --region {self.region} --types {instance_type}` to price it"
            )
        self._memo[instance_type] = result
        return result


def on_demand_rates(
    instance_types: Iterable[str], region: str, catalog: Catalog | None = None
) -> dict[str, float | None]:
    """The On-Demand $/h the cost engine prices each type at in `region` (price book for catalog types, the
    region's service rates or a refresh for CPU types); None where the type has no On-Demand price there."""
    resolver = RateResolver(region, catalog)
    out: dict[str, float | None] = {}
    for itype in instance_types:
        found = resolver.of(itype)
        out[itype] = None if isinstance(found, str) else found.on_demand
    return out
