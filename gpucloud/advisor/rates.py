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


# AWS EC2 user guide (capacity-blocks-purchase, capacity-blocks-extend, checked 2026-12-01): a block is bought,
# and extended, for 1-14 days in 1-day steps or 7-182 days in 7-day steps, 182 days at most in all; it ends at
# 11:30 UTC, so it is billed in whole days, up front. A block holds 1, 2, 4, 8, 16, 32 or 64 instances.
CAPACITY_BLOCK_MAX_DAYS = 182
CAPACITY_BLOCK_DAILY_STEPS_UP_TO = 14
CAPACITY_BLOCK_WEEKLY_STEP = 7
CAPACITY_BLOCK_SIZES = (64, 32, 16, 8, 4, 2, 1)


def block_lengths(days: int) -> list[int]:
    """Block lengths (days) that cover exactly ``days`` whole days, fewest purchases first: 182-day blocks, then
    one block of the rest, as a purchasable block of whole weeks plus a daily extension where the rest is not
    itself a purchasable length (15 days: a 14-day block extended by 1; 30: 28 + 2)."""
    if days < 1:
        return []
    full, rest = divmod(days, CAPACITY_BLOCK_MAX_DAYS)
    out = [CAPACITY_BLOCK_MAX_DAYS] * full
    if rest <= CAPACITY_BLOCK_DAILY_STEPS_UP_TO or rest % CAPACITY_BLOCK_WEEKLY_STEP == 0:
        out += [rest] if rest else []
    else:
        weeks = rest - rest % CAPACITY_BLOCK_WEEKLY_STEP
        out += [weeks, rest - weeks]
    return out


def capacity_block_hours(hours: float) -> float:
    """Hours billed to cover ``hours`` of use entirely with Capacity Blocks: whole days, since any whole number of
    days is a block length or a block plus an extension (:func:`block_lengths`)."""
    return math.ceil(hours / 24 - 1e-9) * 24


def capacity_block_plan(hours: float, block_rate: float, on_demand_rate: float | None) -> tuple[float, int, float]:
    """The cheapest way for one node to run ``hours`` on Capacity Blocks: ``(cost, block_days, on_demand_hours)``.

    Blocks bill whole days, so the last part-day either takes one more block day or runs On-Demand after the
    block ends (15.2 days: 15 block days and 4.8 On-Demand hours when that is cheaper than a 16th day). Fewer
    block days than that never pay when a block hour costs less than an On-Demand hour, and when it costs more
    the On-Demand market wins outright, which the optimiser weighs as its own market.
    """
    whole = math.floor(hours / 24 + 1e-9)
    rest = max(0.0, hours - whole * 24)
    covered = math.ceil(hours / 24 - 1e-9)
    best = (block_rate * covered * 24, covered, 0.0)
    if on_demand_rate is not None and whole >= 1 and rest > 0:
        mixed = block_rate * whole * 24 + on_demand_rate * rest
        if mixed < best[0]:
            best = (mixed, whole, rest)
    return best


def block_sizes(nodes: int) -> list[int]:
    """Instance counts of the blocks that hold ``nodes`` instances (1, 2, 4, 8, 16, 32 or 64 each), fewest first."""
    out = []
    for size in CAPACITY_BLOCK_SIZES:
        while nodes >= size:
            out.append(size)
            nodes -= size
    return out


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


def interruption_source(bucket: int, family: str, notes: str) -> str:
    """How the interruption rate is labelled: the catalog calls every family's bucket a planning assumption
    (families[].notes: 'a planning assumption ..., not Spot Advisor data'), so it is one unless it says otherwise."""
    if "planning assumption" in notes:
        return (
            f"assumed interruption bucket {bucket} ({BUCKET_LABEL[bucket]} a month) for family {family}: a "
            "planning assumption, not Spot Advisor data"
        )
    return f"Spot Advisor bucket {bucket} ({BUCKET_LABEL[bucket]} a month) for family {family}"


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
        interruption_source=interruption_source(bucket, spec.family, fam.notes),
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


def price_provenance(spec: InstanceSpec, basis: str) -> tuple[str | None, str | None]:
    """(date, source) of the rate `hourly_price` chose: the Capacity Block rate's own, else the On-Demand one's."""
    if basis == "capacity-block":
        return spec.capacity_block_price_date, spec.capacity_block_source
    if spec.on_demand_usd is None:
        # Sizes the catalog holds no price for: the regional price book's figure (see node_rates).
        return _book_on_demand(spec.instance_type, "us-east-1")[1], "price book"
    return spec.price_date, spec.price_source
