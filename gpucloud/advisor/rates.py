"""The one place the advisor reads prices: a node's hourly rate per market, from the catalog's price API.

`gpucloud mix` and `gpucloud recommend` take every price through :func:`node_rates`, so a regional price book
replaces this one function and nothing else. A market that is not sold (no On-Demand SKU, no Capacity Blocks,
no spot) is ``None`` here, never another market's rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpucloud.catalog import Catalog, InstanceSpec

# Spot Instance Advisor buckets: share of instances interrupted in a month (midpoints; ">20%" taken as 25 %).
BUCKET_MONTHLY_SHARE = {0: 0.025, 1: 0.075, 2: 0.125, 3: 0.175, 4: 0.25}
BUCKET_LABEL = {0: "<5%", 1: "5-10%", 2: "10-15%", 3: "15-20%", 4: ">20%"}
HOURS_PER_MONTH = 730


@dataclass(frozen=True, slots=True)
class NodeRates:
    """USD per node-hour in each market, and the spot interruption rate per instance-hour."""

    on_demand: float | None
    spot: float | None
    reserved_1y: float | None
    reserved_3y: float | None
    capacity_block: float | None
    interruption_rate_per_hour: float
    # Where the spot price, the interruption rate and the On-Demand price come from: `gpucloud mix` prints them;
    # the plan's mix advice reports none of them and leaves them empty.
    spot_source: str = ""
    interruption_source: str = ""
    price_date: str | None = None


def capacity_block_hours(hours: float) -> float:
    """Hours billed for ``hours`` of use on Capacity Blocks: blocks run 1-14 days in 1-day steps, then 7-day steps
    to 182 days (AWS EC2 user guide, capacity-blocks-purchase); longer use takes several blocks."""
    days = math.ceil(hours / 24 - 1e-9)
    full, rest = divmod(days, 182)
    if rest > 14:
        rest = 7 * math.ceil(rest / 7)
    return (full * 182 + rest) * 24


def bucket_rate_per_hour(bucket: int) -> float:
    """Poisson rate per instance-hour whose chance of at least one interruption in a month is the bucket's share.

    P(no interruption in a month) = exp(-lambda * 730) = 1 - share, so lambda = -ln(1 - share) / 730.
    """
    return -math.log1p(-BUCKET_MONTHLY_SHARE[bucket]) / HOURS_PER_MONTH


def _book_on_demand(instance_type: str, region: str) -> tuple[float | None, str | None]:
    """The price book's dated On-Demand rate (snapshot or refresh) for sizes the catalog holds no price for."""
    try:
        from gpucloud.prices import region_rates

        figure = region_rates(instance_type, region).on_demand
    except (ImportError, KeyError, ValueError):
        return None, None
    return (figure.usd, figure.as_of) if figure is not None else (None, None)


def node_rates(spec: InstanceSpec, catalog: Catalog, region: str = "us-east-1") -> NodeRates:
    fam = catalog.family_pricing(spec.family)
    od = spec.on_demand_usd if spec.on_demand else None
    price_date = spec.price_date
    if spec.on_demand and od is None:
        # Intermediate sizes (g5.2xlarge ... g6e.24xlarge) are priced by the regional price book, not the catalog.
        od, price_date = _book_on_demand(spec.instance_type, region)
    spot: float | None = None
    # Sold on spot but with neither a refreshed price nor an On-Demand price to estimate one from: say that, not
    # "not sold" (p5e.48xlarge has no On-Demand SKU; a size may have no price in the region).
    spot_source = (
        "no spot price: no refreshed price and no On-Demand rate to estimate from" if spec.spot else "not sold on spot"
    )
    if spec.spot and spec.spot_usd is not None:
        spot, spot_source = spec.spot_usd, f"refreshed spot price ({spec.spot_price_date})"
    elif spec.spot and od is not None:
        spot, spot_source = od * (1 - fam.spot_discount), f"family estimate, {fam.spot_discount:.1%} off On-Demand"
    # Commitments (Savings Plans / RIs) discount On-Demand usage: a type without an On-Demand SKU has none.
    r1 = od * (1 - fam.reserved_1y) if od is not None else None
    r3 = od * (1 - fam.reserved_3y) if od is not None else None
    cb = spec.capacity_block_usd if spec.capacity_block else None
    bucket = fam.spot_interruption_bucket
    return NodeRates(
        on_demand=od,
        spot=spot,
        reserved_1y=r1,
        reserved_3y=r3,
        capacity_block=cb,
        interruption_rate_per_hour=bucket_rate_per_hour(bucket),
        spot_source=spot_source,
        interruption_source=f"Spot Advisor bucket {bucket} ({BUCKET_LABEL[bucket]} a month) for family {spec.family}",
        price_date=price_date,
    )


def hourly_price(spec: InstanceSpec, catalog: Catalog) -> tuple[float | None, str]:
    """The rate `recommend` prices a job at: On-Demand, else the Capacity Block rate (the only way to buy it)."""
    rates = node_rates(spec, catalog)
    if rates.on_demand is not None:
        return rates.on_demand, "on-demand"
    if rates.capacity_block is not None:
        return rates.capacity_block, "capacity-block"
    return None, "no price"
