"""gpucloud.advisor.rates: Capacity Block billing, Spot Advisor buckets as Poisson rates, and the node rates
`gpucloud mix` and `gpucloud recommend` price with. Expected figures come from AWS's published rules and the
shipped catalog/snapshot, worked out by hand in the comments."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpucloud.advisor.rates import (
    BUCKET_LABEL,
    BUCKET_MONTHLY_SHARE,
    block_lengths,
    block_sizes,
    bucket_rate_per_hour,
    capacity_block_hours,
    capacity_block_plan,
    hourly_price,
    node_rates,
)
from gpucloud.catalog import Catalog

CATALOG = Catalog.load()


# AWS EC2 user guide (capacity-blocks-purchase, capacity-blocks-extend): blocks are bought and extended for 1-14
# days in 1-day steps and 7-182 days in 7-day steps, so any whole number of days is billable; longer use takes
# several blocks.
@pytest.mark.parametrize(
    ("days_used", "days_billed"),
    [
        (1, 1),  # exactly one day: one 1-day block, not two
        (25 / 24, 2),  # a day and an hour: two days
        (14, 14),
        (15, 15),  # a 14-day block extended by one day, not a 21-day block
        (30.4, 31),
        (182, 182),
        (196, 196),
        (197, 197),  # 182 + 15
        (202, 202),
    ],
)
def test_capacity_block_hours_are_whole_days(days_used: float, days_billed: int) -> None:
    assert capacity_block_hours(days_used * 24) == days_billed * 24


@pytest.mark.parametrize(
    ("days", "lengths"),
    [
        (0, []),
        (1, [1]),
        (14, [14]),
        (15, [14, 1]),  # a 14-day block and a 1-day extension
        (21, [21]),
        (30, [28, 2]),
        (181, [175, 6]),
        (182, [182]),
        (183, [182, 1]),
        (197, [182, 14, 1]),
        (364, [182, 182]),
    ],
)
def test_block_lengths_are_purchasable_and_add_up(days: int, lengths: list[int]) -> None:
    assert block_lengths(days) == lengths


def test_every_block_length_up_to_two_years_is_purchasable() -> None:
    purchasable = {*range(1, 15), *range(21, 183, 7)}
    for days in range(1, 731):
        lengths = block_lengths(days)
        assert sum(lengths) == days
        assert set(lengths) <= purchasable, days


@pytest.mark.parametrize(
    ("hours", "on_demand", "expected"),
    [
        # 15.2 days at 41.528 a block hour: 15 days and 4.8 h On-Demand at 55.04 (14,950.08 + 264.19) beat 16 days
        # (15,946.75).
        (364.8, 55.04, (41.528 * 360 + 55.04 * 4.8, 15, 4.8)),
        # 15.9 days: the 16th block day (15,946.75) beats 21.6 h On-Demand (14,950.08 + 1,188.86).
        (381.6, 55.04, (41.528 * 384, 16, 0.0)),
        (364.8, None, (41.528 * 384, 16, 0.0)),  # no On-Demand to finish on
        (20.0, 55.04, (41.528 * 24, 1, 0.0)),  # under a day: one block day
        (48.0, 55.04, (41.528 * 48, 2, 0.0)),  # whole days exactly
    ],
)
def test_capacity_block_plan_ends_on_demand_when_cheaper(
    hours: float, on_demand: float | None, expected: tuple[float, int, float]
) -> None:
    cost, days, after = capacity_block_plan(hours, 41.528, on_demand)
    assert (cost, days, after) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("nodes", "sizes"), [(1, [1]), (8, [8]), (3, [2, 1]), (100, [64, 32, 4]), (256, [64, 64, 64, 64])]
)
def test_blocks_hold_power_of_two_instance_counts(nodes: int, sizes: list[int]) -> None:
    assert block_sizes(nodes) == sizes


# A bucket's share is the chance of at least one interruption in a month (730 h): exp(-lambda * 730) = 1 - share.
# -ln(0.975) = 0.0253178, -ln(0.925) = 0.0779615, -ln(0.875) = 0.1335314, -ln(0.825) = 0.1923719,
# -ln(0.75) = 0.2876821; each over 730 h.
@pytest.mark.parametrize(
    ("bucket", "per_hour"),
    [(0, 3.468193e-5), (1, 1.067966e-4), (2, 1.829197e-4), (3, 2.635231e-4), (4, 3.940850e-4)],
)
def test_bucket_rates(bucket: int, per_hour: float) -> None:
    assert bucket_rate_per_hour(bucket) == pytest.approx(per_hour, rel=1e-6)
    assert math.exp(-bucket_rate_per_hour(bucket) * 730) == pytest.approx(1 - BUCKET_MONTHLY_SHARE[bucket])


def test_node_rates_from_the_catalog_and_the_family_discounts() -> None:
    rates = node_rates(CATALOG.get("g6e.12xlarge"), CATALOG)
    # On-Demand 10.49264 (catalog, 2026-01-21); g6e: spot 60 % off, 1y 37 % off, 3y 63.5 % off, bucket 1.
    assert rates.on_demand == 10.49264 and rates.price_date == "2026-01-21"
    assert rates.spot == pytest.approx(4.197056)  # 10.49264 * 0.4
    assert rates.spot_source == "family estimate, 60.0% off On-Demand"
    assert rates.reserved_1y == pytest.approx(6.6103632)  # 10.49264 * 0.63
    assert rates.reserved_3y == pytest.approx(3.8298136)  # 10.49264 * 0.365
    assert rates.capacity_block is None
    assert rates.interruption_rate_per_hour == pytest.approx(1.067966e-4, rel=1e-6)
    # instances.json families.g6e.notes calls bucket 1 "a planning assumption for G-class ..., not Spot Advisor data".
    assert rates.interruption_source == (
        "assumed interruption bucket 1 (5-10% a month) for family g6e: a planning assumption, not Spot Advisor data"
    )
    assert BUCKET_LABEL[1] == "5-10%"


def test_intermediate_size_takes_the_price_books_on_demand_rate() -> None:
    # g5.2xlarge: no catalog price; the snapshot's us-east-1 On-Demand is 1.212 (vantage, as of 2026-01-21).
    rates = node_rates(CATALOG.get("g5.2xlarge"), CATALOG)
    assert (rates.on_demand, rates.price_date) == (1.212, "2026-01-21")
    assert rates.spot == pytest.approx(0.50298)  # 1.212 * (1 - 0.585)
    assert rates.reserved_1y == pytest.approx(0.76356)  # 1.212 * 0.63
    # us-west-1 has no g5.2xlarge figure: no On-Demand, so no commitment and no spot estimate either.
    west = node_rates(CATALOG.get("g5.2xlarge"), CATALOG, "us-west-1")
    assert (west.on_demand, west.spot, west.reserved_1y, west.reserved_3y, west.price_date) == (
        None,
        None,
        None,
        None,
        None,
    )


def test_refreshed_spot_price_wins_over_the_family_estimate() -> None:
    catalog = CATALOG.with_prices({"g6e.12xlarge": {"spot_usd": 3.9, "price_date": "2026-08-02"}})
    rates = node_rates(catalog.get("g6e.12xlarge"), catalog)
    assert (rates.spot, rates.spot_source) == (3.9, "refreshed spot price (2026-08-02)")


def test_type_not_sold_on_spot_has_no_spot_rate() -> None:
    spec = replace(CATALOG.get("g6e.12xlarge"), spot=False)
    rates = node_rates(spec, CATALOG)
    assert (rates.spot, rates.spot_source) == (None, "not sold on spot")
    assert rates.on_demand == 10.49264


def test_capacity_block_only_type() -> None:
    # p5e.48xlarge: no On-Demand SKU, Capacity Blocks 47.76/h; commitments discount On-Demand, so none.
    rates = node_rates(CATALOG.get("p5e.48xlarge"), CATALOG)
    assert (rates.on_demand, rates.reserved_1y, rates.reserved_3y, rates.capacity_block) == (None, None, None, 47.76)
    assert hourly_price(CATALOG.get("p5e.48xlarge"), CATALOG) == (47.76, "capacity-block")
    # The catalog marks p5e as sold on spot; with no price to estimate from it is unpriced, not "not sold".
    assert (rates.spot, rates.spot_source) == (
        None,
        "no spot price: no refreshed price and no On-Demand rate to estimate from",
    )


def test_hourly_price_prefers_on_demand_and_says_when_there_is_none() -> None:
    assert hourly_price(CATALOG.get("p5.48xlarge"), CATALOG) == (55.04, "on-demand")
    unsold = replace(CATALOG.get("g5.xlarge"), on_demand=False, on_demand_usd=None)
    assert hourly_price(unsold, CATALOG) == (None, "no price")


def test_a_market_marked_not_sold_has_no_rate_even_with_a_figure() -> None:
    # The module's rule: a market that is not sold is None, whatever figure the record still carries.
    spec = replace(CATALOG.get("p5.48xlarge"), on_demand=False, capacity_block=False)
    assert (spec.on_demand_usd, spec.capacity_block_usd) == (55.04, 41.528)
    rates = node_rates(spec, CATALOG)
    assert (rates.on_demand, rates.capacity_block, rates.reserved_1y, rates.reserved_3y) == (None, None, None, None)
