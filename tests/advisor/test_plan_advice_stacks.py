"""The plan's mix advice on the shipped stacks: prod and staging figures to the cent, rebuilt from the snapshot
JSON and the catalog's family discounts, then run through the optimiser with the pool's inputs."""

from __future__ import annotations

from typing import Any

import pytest
from test_plan_advice import HOURS, RAW, ROOT, by_pool, expected, split

from gpucloud.advisor.plan_advice import DEFAULT_HORIZON_MONTHS, mix_advice
from gpucloud.cost import plan_resources, price_plan


@pytest.fixture(scope="module")
def stack_advice() -> dict[str, dict[str, Any]]:
    from gpucloud.plan import run_program

    out = {}
    for stack in ("staging", "prod"):
        plan = run_program(ROOT, stack)
        resources_ = plan_resources(plan)
        out[stack] = mix_advice(resources_, price_plan(plan), include_estimates=True)
    return out


# --- the shipped stacks ---------------------------------------------------------------------------------------


PROD = [
    # pool, type, today, workload coupling, advised split
    ("infer-l40s", "g6e.12xlarge", split(on_demand=3, spot=1), "independent", split(reserved_1y=2, spot=2)),
    ("train-h100", "p5.48xlarge", split(on_demand=2), "synchronous", split(reserved_1y=1, spot=1)),
    ("train-h200", "p5en.48xlarge", split(capacity_block=4), "synchronous", split(reserved_1y=2, spot=2)),
]


@pytest.mark.parametrize(("pool", "itype", "today", "coupling", "advised"), PROD, ids=[p[0] for p in PROD])
def test_prod_pools_get_the_optimum_to_the_cent(
    stack_advice: dict[str, dict[str, Any]],
    pool: str,
    itype: str,
    today: dict[str, int],
    coupling: str,
    advised: dict[str, int],
) -> None:
    entry = by_pool(stack_advice["prod"])[(pool, itype)]
    best, best_total, today_total = expected(itype, "us-east-1", today, "medium", coupling)
    assert best == advised
    assert (entry["status"], entry["tolerance"], entry["coupling"]) == ("advice", "medium", coupling)
    assert entry["current"]["split"] == today and entry["advice"]["split"] == advised
    assert entry["advice"]["total_usd"] == round(best_total, 2)
    assert entry["current"]["total_usd"] == round(today_total, 2)
    assert entry["saving_usd"] == round(today_total - best_total, 2)
    assert entry["saving_percent"] == round(100 * (today_total - best_total) / today_total, 1)


def test_prod_today_is_what_the_cost_engine_bills(stack_advice: dict[str, dict[str, Any]]) -> None:
    pools = by_pool(stack_advice["prod"])
    # No spot today: today's total is the hourly rate x nodes x 8760 h, the rate read from the snapshot file.
    h100 = RAW["regions"]["us-east-1"]["p5.48xlarge"]["on_demand"]["usd"]
    assert pools[("train-h100", "p5.48xlarge")]["current"]["total_usd"] == round(2 * h100 * HOURS, 2) == 964300.8
    block = RAW["regions"]["us-east-1"]["p5en.48xlarge"]["capacity_block"]["usd"]
    assert pools[("train-h200", "p5en.48xlarge")]["current"]["total_usd"] == round(4 * block * HOURS, 2)
    assert pools[("train-h100", "p5.48xlarge")]["current"]["monthly_usd"] == 80358.4
    advice = stack_advice["prod"]
    assert (advice["advised"], advice["already_optimal"], advice["not_advised"]) == (3, 0, 0)
    # Savings on published rates apart from those resting on estimates (planning commitment/spot discounts).
    published = [p["saving_usd"] for p in advice["pools"] if p.get("saving_basis") == "published"]
    estimated = [p["saving_usd"] for p in advice["pools"] if p.get("saving_basis") == "estimate"]
    assert advice["saving_usd"] == round(sum(published), 2)
    assert advice["estimated_saving_usd"] == round(sum(estimated), 2)
    assert advice["region"] == "us-east-1" and advice["horizon_months"] == DEFAULT_HORIZON_MONTHS == 12.0


def test_staging_training_pool_and_karpenter_pool(stack_advice: dict[str, dict[str, Any]]) -> None:
    pools = by_pool(stack_advice["staging"])
    train = pools[("train-l40s", "g6e.12xlarge")]
    # One node, medium tolerance: floor(1 x 50 %) = 0 spot, so the whole node goes to the published 1y rate.
    row = RAW["regions"]["us-east-1"]["g6e.12xlarge"]
    saving = (row["on_demand"]["usd"] - row["reserved_1y"]["usd"]) * HOURS
    assert train["advice"]["split"] == split(reserved_1y=1) and train["current"]["split"] == split(on_demand=1)
    assert train["saving_usd"] == round(saving, 2) == 34008.77
    # The Karpenter pool: its 2 expected nodes run all spot, so its tolerance is high and spot is already cheapest;
    # the ceiling's dearer g6e.4xlarge (no expected nodes) is not a pool of its own.
    infer = pools[("infer-l40s", "g6e.xlarge")]
    assert (infer["status"], infer["tolerance"], infer["nodes"]) == ("already-optimal", "high", 2)
    assert infer["saving_usd"] == 0.0 and ("infer-l40s", "g6e.4xlarge") not in pools
    assert infer["resources"] == [
        "urn:pulumi:staging::gpucloud::gpucloud:nodepool:GpuNodePool$kubernetes:karpenter.sh/v1:NodePool::"
        "gpucloud-staging-infer-l40s-nodepool"
    ]
