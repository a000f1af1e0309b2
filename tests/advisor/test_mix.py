"""`gpucloud mix`: the optimiser against a brute force over every integer split, named splits, the checkpoint model."""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
from importlib import resources
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from gpucloud.advisor.mix import (
    MixInputError,
    MixRequest,
    optimal_interval,
    optimise,
    plan_mix,
    pool_advice,
    price_split,
    time_per_work,
    young_interval,
)
from gpucloud.advisor.rates import NodeRates, bucket_rate_per_hour
from gpucloud.catalog import Catalog
from gpucloud.spec import NodePoolSpec

# The shipped catalog, loaded once: conftest clears get_catalog's cache before every test.
CATALOG = Catalog.load()

H = 730  # hours per month


def rates(
    od: float | None = 10.0,
    spot: float | None = 4.0,
    r1: float | None = 6.2,
    r3: float | None = 4.0,
    cb: float | None = None,
    lam: float = 0.0002,
) -> NodeRates:
    return NodeRates(
        on_demand=od,
        spot=spot,
        reserved_1y=r1,
        reserved_3y=r3,
        capacity_block=cb,
        interruption_rate_per_hour=lam,
        spot_source="test",
        interruption_source="test",
        price_date="2026-01-01",
    )


# ---- the brute force: plain arithmetic, nothing from the optimiser but the price inputs ----------------------


def brute_time_factor(lam: float, c: float, r: float) -> float:
    """min over tau of (e^(lam (tau + c)) - 1)(1/lam + r)/tau, by a log grid then a fine linear grid."""

    def f(tau: float) -> float:
        exponent = lam * (tau + c)
        return math.inf if exponent > 700 else (math.exp(exponent) - 1) * (1 / lam + r) / tau

    grid = [10 ** (k / 400) for k in range(-2400, 2401)]  # 1e-6 .. 1e6 hours
    best = min(grid, key=f)
    lo, hi = best / 1.01, best * 1.01
    fine = [lo + (hi - lo) * k / 2000 for k in range(2001)]
    return min(f(t) for t in fine)


# AWS EC2 user guide (capacity-blocks-purchase, capacity-blocks-extend): a block is bought, or extended, for
# 1-14 days in 1-day steps or 21, 28 ... 182 days; blocks can follow one another. Billed up front in whole days.
PURCHASABLE_DAYS = [*range(1, 15), *range(21, 183, 7)]


@functools.cache
def buyable_days(limit: int) -> frozenset[int]:
    """Every total of block and extension lengths up to ``limit`` days (an unbounded coin sum, by DP)."""
    reach = {0}
    for total in range(1, limit + 1):
        if any(total - d in reach for d in PURCHASABLE_DAYS if d <= total):
            reach.add(total)
    return frozenset(reach - {0})


def block_cost(hours: float, cb: float, od: float | None) -> float:
    """One node on blocks: every buyable number of whole block days, the hours past the blocks On-Demand."""
    options = []
    for days in buyable_days(math.ceil(hours / 24) + 1):
        left = hours - 24 * days
        left = left if left > 1e-6 else 0.0  # a duration given in months comes back as 504.0000001 hours
        if left and od is None:
            continue
        options.append(cb * 24 * days + left * (od or 0.0))
    return min(options)


def brute_force(p: NodeRates, n: int, months: float, share: float, c_s: float, r_s: float, sync: bool) -> float:
    hours = months * H
    lam = p.interruption_rate_per_hour
    factors: dict[int, float] = {}
    best = math.inf
    for split in itertools.product(range(n + 1), repeat=5):
        if sum(split) != n:
            continue
        od, r1, r3, cb, spot = split
        if spot > math.floor(n * share) or cb > 256:
            continue
        if (spot and p.spot is None) or (od and p.on_demand is None) or (cb and p.capacity_block is None):
            continue
        if (r1 and (p.reserved_1y is None or p.on_demand is None)) or (
            r3 and (p.reserved_3y is None or p.on_demand is None)
        ):
            continue
        job_lam = spot * lam if sync else lam
        if spot and job_lam > 0:
            if job_lam not in factors:
                factors[job_lam] = brute_time_factor(job_lam, c_s / 3600, r_s / 3600)
            factor = factors[job_lam]
        else:
            factor = 1.0
        wall = hours * factor if sync else hours

        def reserved(rate: float, term_months: int, wall: float = wall) -> float:
            term = term_months * H
            options = []
            for k in range(1, int(wall // term) + 2):
                options.append(k * term * rate + max(0.0, wall - k * term) * p.on_demand)
            return min(options)

        total = 0.0
        total += od * p.on_demand * wall if od else 0
        total += cb * block_cost(wall, p.capacity_block, p.on_demand) if cb else 0
        total += r1 * reserved(p.reserved_1y, 12) if r1 else 0
        total += r3 * reserved(p.reserved_3y, 36) if r3 else 0
        total += spot * p.spot * hours * factor if spot else 0
        best = min(best, total)
    return best


SHARE = {"none": 0.0, "low": 0.25, "medium": 0.5, "high": 1.0}


def generated_cases() -> list[tuple[Any, ...]]:
    """36 cases across price shapes, sizes, horizons (1 week to 40 months) and interruption rates."""
    rng = random.Random(14)
    profiles = [
        dict(od=55.04, spot=25.6, r1=33.57, r3=20.09, cb=41.528),  # p5-like
        dict(od=10.49, spot=4.2, r1=6.61, r3=4.2, cb=None),  # g6e-like: no Capacity Blocks
        dict(od=21.96, spot=7.36, r1=13.92, r3=8.01, cb=14.75),  # p4d-like
        dict(od=None, spot=None, r1=None, r3=None, cb=47.76),  # p5e-like: Capacity Blocks only
        dict(od=1.0, spot=0.9, r1=0.63, r3=0.40, cb=None),  # spot barely cheaper
        dict(od=8.0, spot=None, r1=5.0, r3=3.5, cb=6.0),  # no spot
    ]
    cases = []
    months = [0.25, 1, 3, 7, 12, 13, 18, 30, 37, 40]
    lams = [0.0, 0.0003, 0.003, 0.03, 0.3]  # 0.03 and 0.3 per instance-hour: heavy interruption
    for i in range(36):
        profile = profiles[i % len(profiles)]
        cases.append(
            (
                profile,
                rng.choice([1, 2, 3, 4, 6, 8]),
                months[i % len(months)],
                rng.choice(["none", "low", "medium", "high", "high"]),
                lams[i % len(lams)],
                rng.choice([60.0, 300.0, 1200.0]),
                rng.choice([0.0, 300.0, 1800.0]),
                rng.random() < 0.75,
            )
        )
    return cases


@pytest.mark.parametrize(("profile", "n", "months", "tolerance", "lam", "c", "r", "sync"), generated_cases())
def test_optimum_matches_brute_force_over_every_integer_split(
    profile: dict[str, float | None], n: int, months: float, tolerance: str, lam: float, c: float, r: float, sync: bool
) -> None:
    p = rates(**profile, lam=lam)
    req = MixRequest(
        "p5.48xlarge",
        nodes=n,
        duration_months=months,
        tolerance=tolerance,  # type: ignore[arg-type]
        checkpoint_seconds=c,
        restart_seconds=r,
        coupling="synchronous" if sync else "independent",
    )
    expected = brute_force(p, n, months, SHARE[tolerance], c, r, sync)
    got = optimise(req, p)["best"]["cost"]["total_usd"]
    assert got == pytest.approx(expected, rel=0.01)
    # The exact optimum is exact: the brute force's grid only ever finds the same cost or a hair above.
    assert got <= expected * (1 + 1e-6)


def block_boundary_cases() -> list[tuple[Any, ...]]:
    """Durations just below, at and past every block-length boundary (14 days, each 7-day step, 182 days, two
    blocks), with part-days, over p5-, p4d- and blocks-only price shapes: 63 cases."""
    profiles = [
        dict(od=55.04, spot=25.6, r1=33.57, r3=20.09, cb=41.528),  # p5-like: blocks 25 % under On-Demand
        dict(od=21.96, spot=7.36, r1=13.92, r3=8.01, cb=14.75),  # p4d-like
        dict(od=None, spot=None, r1=None, r3=None, cb=47.76),  # p5e-like: Capacity Blocks only
    ]
    days = [0.2, 1.0, 13.9, 14.0, 14.2, 15.2, 20.5, 21.0, 21.1, 28.4, 30.0, 35.5, 60.3, 181.9, 182.0, 182.3, 196.5]
    days += [203.2, 364.2, 365.0, 400.8]
    sizes = [1, 3, 8]
    return [(profile, sizes[(i + j) % 3], d) for i, profile in enumerate(profiles) for j, d in enumerate(days)]


@pytest.mark.parametrize(("profile", "n", "days"), block_boundary_cases())
def test_capacity_blocks_across_block_length_boundaries_match_brute_force(
    profile: dict[str, float | None], n: int, days: float
) -> None:
    p = rates(**profile, lam=0.0)
    months = days * 24 / H
    req = MixRequest("p5.48xlarge", nodes=n, duration_months=months, tolerance="none")
    expected = brute_force(p, n, months, 0.0, 300.0, 600.0, True)
    got = optimise(req, p)["best"]["cost"]["total_usd"]
    assert got <= expected * 1.01
    assert got == pytest.approx(expected, rel=1e-9)


def test_fifteen_days_of_p5_blocks_beat_on_demand() -> None:
    # The case: 8 x p5.48xlarge for 0.4997 months (364.78 h = 15.2 days). Blocks of 15 days (a 14-day block
    # extended by 1 day) and 4.78 h On-Demand: 8 x (41.528 x 360 + 55.04 x 4.781) = $121,706.6, where all
    # On-Demand is 8 x 55.04 x 364.781 = $160,619.4 and 16 block days 8 x 41.528 x 384 = $127,574.0.
    p = rates(od=55.04, spot=25.6, r1=33.57, r3=20.09, cb=41.528, lam=0.0)
    best = optimise(MixRequest("p5.48xlarge", 8, 0.4997, "none"), p)["best"]
    assert best["split"]["capacity_block"] == 8
    assert best["cost"]["total_usd"] == pytest.approx(8 * (41.528 * 360 + 55.04 * (0.4997 * 730 - 360)))
    assert best["capacity_blocks"] == {
        "nodes": 8,
        "block_days": 15,
        "block_lengths_days": [14, 1],
        "block_instance_counts": [8],
        "on_demand_hours_after": pytest.approx(0.4997 * 730 - 360),
    }


# ---- named splits ------------------------------------------------------------------------------------------------


def test_heavy_interruptions_make_spot_dearer_than_a_1y_commitment() -> None:
    # 4 nodes for 12 months, 0.05 interruptions per instance-hour (one every 20 h), 20-min checkpoints, 30-min restart.
    p = rates(od=55.04, spot=25.6, r1=33.57, r3=20.09, cb=None, lam=0.05)
    req = MixRequest("p5.48xlarge", 4, 12, "high", checkpoint_seconds=1200, restart_seconds=1800)
    result = optimise(req, p)
    assert result["best"]["split"] == {
        "on_demand": 0,
        "reserved_1y": 4,
        "reserved_3y": 0,
        "capacity_block": 0,
        "spot": 0,
    }
    assert result["best"]["cost"]["total_usd"] == pytest.approx(4 * 33.57 * 12 * H)
    all_spot = next(o for o in result["runners_up"] if o["label"] == "all-spot")
    lam_job = 4 * 0.05
    tau = optimal_interval(lam_job, 1200 / 3600)
    factor = math.expm1(lam_job * (tau + 1 / 3)) * (1 / lam_job + 0.5) / tau
    assert all_spot["cost"]["total_usd"] == pytest.approx(4 * 25.6 * 12 * H * factor)
    # The lost work is in the total, not beside it: all-spot looks 45 % cheaper than 1y without it, is dearer with it.
    assert all_spot["cost"]["paid_without_interruptions_usd"] == pytest.approx(4 * 25.6 * 12 * H)
    assert all_spot["cost"]["lost_work_usd"] == pytest.approx(4 * 25.6 * 12 * H * (factor - 1))
    assert all_spot["cost"]["total_usd"] > result["best"]["cost"]["total_usd"]


def test_short_horizon_commitment_pays_the_whole_term() -> None:
    # 7 months: a 1y term bills 12 months (12 x 6.2 = 74.4 > 7 x 10 = 70), so On-Demand wins without spot.
    p = rates(od=10.0, r1=6.2, r3=4.0, cb=None)
    result = optimise(MixRequest("x.y", 3, 7, "none"), p)
    assert result["best"]["split"]["on_demand"] == 3
    assert result["best"]["cost"]["total_usd"] == pytest.approx(3 * 10.0 * 7 * H)
    one_year = next(o for o in result["runners_up"] if o["label"] == "all-reserved-1y")
    assert one_year["cost"]["total_usd"] == pytest.approx(3 * 6.2 * 12 * H)
    assert one_year["commitments"] == [
        {
            "kind": "reserved-1y",
            "nodes": 3,
            "terms": 1,
            "committed_months": 12,
            "on_demand_months_after": 0.0,
            "unused_months": pytest.approx(5.0),
        }
    ]


def test_18_month_job_takes_one_1y_term_then_on_demand() -> None:
    # 12 x 6 + 6 x 10 = 132 beats two terms (144), a 3y term (36 x 4 = 144) and On-Demand (180).
    p = rates(od=10.0, r1=6.0, r3=4.0, cb=None, spot=None)
    best = optimise(MixRequest("x.y", 2, 18, "none"), p)["best"]
    assert best["split"]["reserved_1y"] == 2
    assert best["cost"]["total_usd"] == pytest.approx(2 * (12 * 6.0 + 6 * 10.0) * H)
    assert best["commitments"][0]["terms"] == 1
    assert best["commitments"][0]["on_demand_months_after"] == pytest.approx(6.0)
    assert best["commitments"][0]["unused_months"] == 0


def test_tolerance_caps_the_spot_share() -> None:
    p = rates(od=10.0, spot=2.0, r1=None, r3=None, lam=0.0001)
    for tolerance, spot in (("none", 0), ("low", 1), ("medium", 2), ("high", 5)):
        best = optimise(MixRequest("x.y", 5, 2, tolerance), p)["best"]  # type: ignore[arg-type]
        assert (best["split"]["spot"], best["split"]["on_demand"]) == (spot, 5 - spot), tolerance


def test_capacity_blocks_cap_at_256_instances() -> None:
    p = rates(od=10.0, spot=None, r1=None, r3=None, cb=7.0)
    best = optimise(MixRequest("x.y", 300, 1, "none"), p)["best"]
    assert (best["split"]["capacity_block"], best["split"]["on_demand"]) == (256, 44)
    # A 30.4-day month on blocks: 30 block days (a 28-day block extended by 2) and the last 10 h On-Demand
    # (7 x 720 + 10 x 10 = 5,140 a node, under 31 block days at 7 x 744 = 5,208).
    assert best["cost"]["total_usd"] == pytest.approx(256 * (7.0 * 720 + 10.0 * 10) + 44 * 10.0 * H)


def test_synchronous_job_sees_every_spot_node_interrupt_it() -> None:
    p = rates(od=10.0, spot=4.0, r1=None, r3=None, lam=0.01)
    sync = optimise(MixRequest("x.y", 8, 1, "high", checkpoint_seconds=600, restart_seconds=600), p)["best"]
    indep = optimise(
        MixRequest("x.y", 8, 1, "high", checkpoint_seconds=600, restart_seconds=600, coupling="independent"), p
    )["best"]
    assert sync["checkpoint"]["interruptions_per_hour"] == pytest.approx(8 * 0.01)
    assert indep["checkpoint"]["interruptions_per_hour"] == pytest.approx(0.01)
    assert indep["split"]["spot"] == 8
    # Each independent spot node pays its own stretch; On-Demand nodes of a synchronous job wait with the spot ones.
    factor = indep["checkpoint"]["time_factor"]
    assert indep["cost"]["total_usd"] == pytest.approx(8 * 4.0 * H * factor)
    assert sync["wall_hours"] == pytest.approx(H * sync["checkpoint"]["time_factor"])


def test_no_interruptions_means_no_lost_work_and_all_spot() -> None:
    best = optimise(MixRequest("x.y", 3, 2, "high", interruptions_per_month=0), rates())["best"]
    assert best["split"]["spot"] == 3 and best["checkpoint"] is None
    assert best["cost"]["lost_work_usd"] == 0 and best["cost"]["total_usd"] == pytest.approx(3 * 4.0 * 2 * H)


def test_young_and_exact_interval() -> None:
    lam, c = 1 / 6, 2 / 60  # one interruption per 6 h, 2-minute checkpoint (hours)
    assert young_interval(lam, c) == pytest.approx(math.sqrt(2 * c * 6))
    tau = optimal_interval(lam, c)
    assert (1 - lam * tau) * math.exp(lam * tau) == pytest.approx(math.exp(-lam * c), rel=1e-12)
    # A grid around it finds nothing lower, and the exact interval beats Young's.
    grid = [tau * (0.9 + 0.0002 * k) for k in range(1001)]
    assert min(time_per_work(lam, t, c, 0.1) for t in grid) >= time_per_work(lam, tau, c, 0.1) - 1e-15
    assert time_per_work(lam, tau, c, 0.1) < time_per_work(lam, young_interval(lam, c), c, 0.1)
    # Series: lambda tau = sqrt(2 lambda C) - 2 lambda C / 3 + ... = 0.10171 -> 36.6 min; Young's is 37.9 min.
    assert tau == pytest.approx(0.61043, abs=1e-4)
    assert young_interval(lam, c) * 60 == pytest.approx(37.95, abs=0.01)


def test_time_per_work_formula() -> None:
    assert time_per_work(0.1, 2.0, 0.5, 0.25) == pytest.approx((math.exp(0.25) - 1) * (10 + 0.25) / 2)


def test_bucket_rate_is_the_monthly_share_as_a_poisson_rate() -> None:
    assert bucket_rate_per_hour(3) == pytest.approx(-math.log(1 - 0.175) / 730)
    assert bucket_rate_per_hour(0) == pytest.approx(-math.log(1 - 0.025) / 730)


def test_catalog_prices_reach_the_optimiser() -> None:
    result = plan_mix(MixRequest("g6e.12xlarge", nodes=8, duration_months=6, tolerance="medium"), CATALOG)
    prices = result["prices"]
    od = 10.49264
    assert prices["on_demand_hour"] == od
    assert prices["spot_hour"] == pytest.approx(od * (1 - 0.60))
    assert prices["reserved_1y_hour"] == pytest.approx(od * (1 - 0.37))
    assert prices["capacity_block_hour"] is None
    assert result["model"]["max_spot_nodes"] == 4
    best = result["best"]
    assert best["split"] == {"on_demand": 4, "reserved_1y": 0, "reserved_3y": 0, "capacity_block": 0, "spot": 4}
    labels = [o["label"] for o in result["runners_up"]]
    assert labels == ["all-spot", "all-on-demand", "all-reserved-1y", "all-reserved-3y"]
    assert [o["allowed"] for o in result["runners_up"]] == [False, True, True, True]
    pool = NodePoolSpec.model_validate(yaml.safe_load(result["node_pools_yaml"])["nodePools"][0])
    assert (pool.capacity.on_demand_base, pool.capacity.on_demand_percentage_above_base, pool.backend) == (
        4,
        0,
        "self-managed",
    )
    assert result["pricing_yaml"] is None
    # The fragment keeps the stack file's key order (not sorted).
    assert result["node_pools_yaml"].startswith("nodePools:\n- name: gpu-pool\n  workload: training\n")
    assert "  minSize: 0\n" in result["node_pools_yaml"]


def test_long_job_commits_and_emits_the_commitment_fragment() -> None:
    result = plan_mix(MixRequest("p5.48xlarge", nodes=4, duration_months=36, tolerance="none"), CATALOG)
    assert result["best"]["split"]["reserved_3y"] == 4
    assert yaml.safe_load(result["pricing_yaml"]) == {
        "gpucloud:pricing": {"commitments": [{"match": "p5", "kind": "savings-plan", "term": "3y", "count": 4}]}
    }
    pool = NodePoolSpec.model_validate(yaml.safe_load(result["node_pools_yaml"])["nodePools"][0])
    assert pool.capacity.on_demand_percentage_above_base == 100 and not pool.spot_nodes_possible
    assert result["pricing_yaml"] == (
        "gpucloud:pricing:\n  commitments:\n  - match: p5\n    kind: savings-plan\n    term: 3y\n    count: 4\n"
    )


def test_capacity_block_only_type_is_planned_on_blocks() -> None:
    result = plan_mix(MixRequest("p5e.48xlarge", nodes=2, duration_months=1, tolerance="none"), CATALOG)
    assert result["best"]["split"]["capacity_block"] == 2
    # 30.4 days with no On-Demand to finish on: 31 block days (a 28-day block extended by 3).
    assert result["best"]["cost"]["total_usd"] == pytest.approx(2 * 47.76 * 31 * 24)
    assert result["notes"] == [
        "2 nodes on Capacity Blocks in blocks of 2 instances for 31 days (a 28-day block extended by 3 days; paid "
        "up front, ending at 11:30 UTC); an extension or a later block needs free capacity when it is bought. Then "
        "put the block's id and AZ where the fragment has placeholders (capacity.reserved.capacityReservationIds, "
        "availabilityZones)"
    ]
    pool = yaml.safe_load(result["node_pools_yaml"])["nodePools"][0]
    assert pool["backend"] == "managed"
    # The blocks are the pool's reserved capacity, not On-Demand nodes p5e does not sell.
    assert pool["capacity"]["onDemandBase"] == 0
    assert pool["capacity"]["reserved"] == {
        "kind": "capacity-block",
        "count": 2,
        "capacityReservationIds": ["cr-<id of the Capacity Block you buy>"],
    }
    assert pool["availabilityZones"] == ["<the AZ of that block>"]
    # Pasted unfilled, the stack spec refuses it and says what an id looks like.
    with pytest.raises(ValidationError, match=r"ids look like cr-0123456789abcdef0"):
        NodePoolSpec.model_validate(pool)
    assert result["prices"]["on_demand_hour"] is None and result["prices"]["reserved_1y_hour"] is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"nodes": 0}, "--nodes must be a whole number of at least 1"),
        ({"duration_months": 0}, "--months must be a positive number"),
        ({"duration_months": math.inf}, "--months must be a positive number"),
        ({"checkpoint_seconds": 0}, "--checkpoint-seconds must be positive"),
        ({"restart_seconds": -1}, "--restart-seconds must be 0 or more"),
        ({"interruptions_per_month": -0.1}, "--interruptions-per-month must be 0 or more"),
        ({"tolerance": "some"}, "--tolerance must be one of"),
        ({"coupling": "loose"}, "--coupling must be 'synchronous'"),
        ({"nodes": True}, "--nodes must be a whole number of at least 1"),
        ({"nodes": 2.0}, "--nodes must be a whole number of at least 1"),
        ({"duration_months": math.nan}, "--months must be a positive number"),
        ({"checkpoint_seconds": math.inf}, "--checkpoint-seconds must be positive"),
        ({"restart_seconds": math.inf}, "--restart-seconds must be 0 or more"),
        ({"interruptions_per_month": math.inf}, "--interruptions-per-month must be 0 or more"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"instance_type": "p5.48xlarge", "nodes": 2, "duration_months": 3}
    with pytest.raises(MixInputError, match=message.replace("(", r"\(")):
        optimise(MixRequest(**{**base, **kwargs}), rates())


def test_nothing_buyable_says_why() -> None:
    p = rates(od=None, spot=None, r1=None, r3=None, cb=5.0)
    with pytest.raises(MixInputError) as info:
        optimise(MixRequest("x.y", 300, 1, "high"), p)
    assert str(info.value) == (
        "x.y cannot be bought for 300 nodes here: it has no On-Demand or commitment price, at most 256 Capacity "
        "Block instances, and spot is not sold"
    )
    capped = rates(od=None, spot=1.0, r1=None, r3=None, cb=5.0)
    with pytest.raises(MixInputError, match=r"and spot is capped at 100 nodes by --tolerance low$"):
        optimise(MixRequest("x.y", 400, 1, "low"), capped)


def test_block_cap_with_spot_lists_the_best_split_without_spot() -> None:
    p = rates(od=10.0, spot=4.0, r1=None, r3=None, cb=7.0, lam=0.0001)
    result = optimise(MixRequest("x.y", 300, 1, "low"), p)
    best = result["best"]
    assert (best["split"]["spot"], best["split"]["capacity_block"], best["split"]["on_demand"]) == (75, 225, 0)
    assert best["label"] == "optimum" and best["allowed"] is True
    by_label = {o["label"]: o for o in result["runners_up"]}
    assert sorted(by_label) == ["all-on-demand", "all-spot", "best-without-spot"]  # 300 > 256: no all-block option
    no_spot = by_label["best-without-spot"]
    assert (no_spot["split"]["capacity_block"], no_spot["split"]["on_demand"], no_spot["allowed"]) == (256, 44, True)
    assert no_spot["cost"]["total_usd"] == pytest.approx(256 * (7.0 * 720 + 10.0 * 10) + 44 * 10.0 * H)
    assert by_label["all-spot"]["allowed"] is False
    assert by_label["all-spot"]["reason"] == "--tolerance low allows at most 75 spot nodes"
    assert "reason" not in by_label["all-on-demand"]
    totals = [o["cost"]["total_usd"] for o in result["runners_up"]]
    assert totals == sorted(totals)
    assert (result["max_spot"], result["rate"]) == (75, 0.0001)


def test_independent_job_stretches_only_its_spot_nodes() -> None:
    p = rates(od=10.0, spot=4.0, r1=None, r3=None, lam=0.01)
    req = MixRequest("x.y", 8, 1, "medium", checkpoint_seconds=600, restart_seconds=600, coupling="independent")
    best = optimise(req, p)["best"]
    assert best["split"]["spot"] == 4 and best["split"]["on_demand"] == 4
    factor = best["checkpoint"]["time_factor"]
    assert best["wall_hours"] == H
    assert best["cost"]["total_usd"] == pytest.approx(4 * 10.0 * H + 4 * 4.0 * H * factor)
    # Without spot nodes nothing is interrupted, whatever the coupling.
    none = optimise(MixRequest("x.y", 8, 1, "none", coupling="independent"), p)["best"]
    assert none["checkpoint"] is None and none["cost"]["lost_work_usd"] == 0


def test_checkpoint_plan_reports_every_figure() -> None:
    p = rates(od=10.0, spot=4.0, r1=None, r3=None, lam=0.02)
    best = optimise(MixRequest("x.y", 2, 1, "high", checkpoint_seconds=360, restart_seconds=720), p)["best"]
    lam, c, r = 0.04, 0.1, 0.2
    tau = optimal_interval(lam, c)
    young = math.sqrt(2 * c / lam)
    factor = math.expm1(lam * (tau + c)) * (1 / lam + r) / tau
    assert best["checkpoint"] == pytest.approx(
        {
            "interruptions_per_hour": lam,
            "mean_hours_between_interruptions": 25.0,
            "young_minutes": young * 60,
            "optimal_minutes": tau * 60,
            "time_factor_young": math.expm1(lam * (young + c)) * (1 / lam + r) / young,
            "time_factor": factor,
            "lost_fraction": 1 - 1 / factor,
        }
    )
    assert best["cost"]["per_month_usd"] == pytest.approx(best["cost"]["total_usd"])


def test_interruptions_faster_than_a_checkpoint_rule_spot_out() -> None:
    assert time_per_work(1.0, 700.0, 0.5, 0.0) == math.inf  # exponent 700.5
    assert time_per_work(1.0, 699.5, 0.5, 0.0) == pytest.approx(math.expm1(700.0) / 699.5)
    # 400 interruptions an hour per node against a 1-hour checkpoint: no segment ever finishes on spot.
    p = rates(od=10.0, spot=1.0, r1=None, r3=None, lam=400.0)
    result = optimise(MixRequest("x.y", 2, 1, "high", checkpoint_seconds=3600), p)
    assert result["best"]["split"]["spot"] == 0
    assert [o["label"] for o in result["runners_up"]] == []


def test_all_spot_pool_is_managed() -> None:
    frag = yaml.safe_load(plan_mix(MixRequest("g6e.12xlarge", 2, 1, "high"), CATALOG)["node_pools_yaml"])
    assert frag["nodePools"][0]["capacity"]["onDemandBase"] == 0 and frag["nodePools"][0]["backend"] == "managed"


def test_pricing_a_market_that_is_not_sold_is_an_error() -> None:
    split = {"on_demand": 0, "reserved_1y": 0, "reserved_3y": 0, "capacity_block": 0, "spot": 1}
    with pytest.raises(MixInputError, match=r"x\.y is not sold as spot"):
        price_split(split, rates(spot=None), MixRequest("x.y", 1, 1), 0.001, "t")


def test_capacity_blocks_bill_whole_blocks() -> None:
    p = rates(od=None, spot=None, r1=None, r3=None, cb=10.0)
    for months, days in ((0.1, 4), (0.5, 16), (1, 31), (7, 213)):  # 73 h; 15.2 d; 30.4 d; 212.9 d: whole days
        best = optimise(MixRequest("x.y", 1, months, "none"), p)["best"]
        assert best["cost"]["total_usd"] == pytest.approx(10.0 * days * 24), months


def test_plan_mix_json_matches_the_schema_and_states_its_model() -> None:
    result = plan_mix(MixRequest("p5.48xlarge", nodes=8, duration_months=3, tolerance="high"), CATALOG)
    schema = json.loads(resources.files("gpucloud.advisor").joinpath("mix.schema.json").read_text())
    jsonschema.validate(result, schema)
    model = result["model"]
    assert model["interruptions_per_instance_hour"] == pytest.approx(-math.log(1 - 0.175) / 730)
    # instances.json families.p5.notes: "Interruption bucket 3 ... is a planning assumption ..., not Spot Advisor data".
    assert model["interruption_source"] == (
        "assumed interruption bucket 3 (15-20% a month) for family p5: a planning assumption, not Spot Advisor data"
    )
    assert (model["max_spot_share"], model["max_spot_nodes"], model["job_rate"]) == (1.0, 8, "spot_nodes * lambda")
    assert model["time_per_work"] == "(exp(lambda*(tau+C)) - 1) * (1/lambda + R) / tau"
    assert model["optimal_interval"] == "(1 - lambda*tau) * exp(lambda*tau) = exp(-lambda*C)"
    assert model["young_interval"] == "sqrt(2*C/lambda)"
    assert model["sources"][0].startswith("J. T. Daly, A higher order estimate of the optimum checkpoint interval")
    assert result["request"] == {
        "instance_type": "p5.48xlarge",
        "nodes": 8,
        "duration_months": 3,
        "tolerance": "high",
        "coupling": "synchronous",
        "checkpoint_seconds": 300.0,
        "restart_seconds": 600.0,
    }
    prices = result["prices"]
    assert (prices["currency"], prices["region"], prices["price_date"]) == ("USD", "us-east-1", "2026-07-28")
    assert prices["spot_source"] == "family estimate, 53.5% off On-Demand"
    assert prices["reserved_3y_hour"] == pytest.approx(55.04 * (1 - 0.635))
    assert prices["capacity_block_hour"] == 41.528
    given = plan_mix(
        MixRequest("p5.48xlarge", 8, 3, "high", coupling="independent", interruptions_per_month=0.5), CATALOG
    )
    assert given["model"]["interruption_source"] == "given (--interruptions-per-month)"
    assert given["model"]["job_rate"] == "lambda per node"
    assert given["model"]["interruptions_per_instance_hour"] == pytest.approx(0.5 / 730)


def test_pool_advice_for_a_plan_report() -> None:
    advice = pool_advice("g6e.12xlarge", 8, 6, "medium", catalog=CATALOG)
    full = plan_mix(MixRequest("g6e.12xlarge", 8, 6, "medium"), CATALOG)
    assert advice["split"] == full["best"]["split"] and advice["total_usd"] == full["best"]["cost"]["total_usd"]
    assert advice["all_on_demand_usd"] == pytest.approx(8 * 10.49264 * 6 * H)
    assert advice["saving_usd"] == pytest.approx(advice["all_on_demand_usd"] - advice["total_usd"])
    assert advice["lost_work_usd"] == full["best"]["cost"]["lost_work_usd"] > 0
    assert advice["checkpoint_minutes"] == full["best"]["checkpoint"]["optimal_minutes"]
    assert (advice["instance_type"], advice["nodes"], advice["duration_months"], advice["tolerance"]) == (
        "g6e.12xlarge",
        8,
        6,
        "medium",
    )
    defaults = pool_advice("g6e.12xlarge", 8, catalog=CATALOG)
    assert (defaults["duration_months"], defaults["tolerance"], defaults["split"]["spot"]) == (12.0, "medium", 4)
    assert pool_advice("g6e.12xlarge", 8, 6, "none", catalog=CATALOG)["split"]["spot"] == 0
    dearer = CATALOG.with_prices({"g6e.12xlarge": {"on_demand_usd": 20.0, "price_date": "2026-01-01"}})
    assert pool_advice("g6e.12xlarge", 1, 1, "none", catalog=dearer)["all_on_demand_usd"] == pytest.approx(20.0 * H)
    blocks = pool_advice("p5e.48xlarge", 2, 1, "none", catalog=CATALOG)
    assert blocks["all_on_demand_usd"] is None and blocks["saving_usd"] is None
    assert blocks["checkpoint_minutes"] is None
