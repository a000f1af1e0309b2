"""The plan's mix advice, figure by figure: every expected value is worked out by hand in the comments from the
shipped snapshot (gpucloud/prices/snapshot.json), the catalog's family discounts and buckets, and the optimiser's
model (issue: the exact exponential-failure model at the optimal checkpoint interval with a restart time; Young's
interval sqrt(2 C MTBF) beside it), never read back from the code under test.

Fast unit tests only (no stack runs), so `make mutation` can run them against every mutant.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from typing import Any

import pytest
from test_plan_advice import CATALOG, NG, advise, node_group, split

from gpucloud.advisor.plan_advice import mix_advice, validate_horizon
from gpucloud.catalog import Catalog
from gpucloud.cost import Commitment, PricingOptions, price_resources
from gpucloud.prices.book import PriceBook, get_price_book, load_snapshot

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NO_SPOT = {"gpucloud.io/interruptible": "false"}


def daly(rate: float, checkpoint_h: float, restart_h: float) -> tuple[float, float]:
    """(optimal interval in hours, expected time per unit of work) of the issue's model, solved here by Newton's
    method on (1 - x) e^x = e^(-lambda C), x = lambda tau (the optimiser bisects; this is a separate solver)."""
    x = math.sqrt(2 * rate * checkpoint_h)  # Young's first-order root, close to the exact one
    for _ in range(50):
        x -= ((1 - x) * math.exp(x) - math.exp(-rate * checkpoint_h)) / (-x * math.exp(x))
    tau = x / rate
    return tau, (math.exp(rate * (tau + checkpoint_h)) - 1) * (1 / rate + restart_h) / tau


# --- the exact model on an all-spot inference pool -------------------------------------------------------------

# g6e: Spot Advisor bucket 1 (5-10 %, midpoint 7.5 % a month), spot estimate 60 % off On-Demand.
# lambda = -ln(1 - 0.075) / 730 = 0.0779615 / 730 = 1.067966e-4 per instance-hour (MTBF 9363.6 h).
# C = 300 s = 1/12 h, R = 600 s = 1/6 h (the optimiser's defaults).
# Young: sqrt(2 C / lambda) = sqrt(0.166667 / 1.067966e-4) = sqrt(1560.6) = 39.504 h = 2370.3 min.
# Exact: (1 - x) e^x = e^(-lambda C) = e^(-8.8997e-6) gives x = 0.0042130, tau = x / lambda = 39.4489 h
# = 2366.93 min; T = (e^(lambda (tau + C)) - 1) (1/lambda + R) / tau = 1.0042487.
G6E_LAMBDA = -math.log(1 - 0.075) / 730
G6E_OD = 10.49264  # snapshot us-east-1 On-Demand (vantage)
G6E_SPOT = 4.197056  # 10.49264 * (1 - 0.60)


def test_independent_spot_pool_gets_the_exact_interval_and_the_stretched_spot_cost() -> None:
    marks = {"gpucloud.io/workload": "inference", "gpucloud.io/interruptible": "true"}
    (entry,) = advise([node_group("inf", "g6e.12xlarge", 4, **marks)])["pools"]
    tau, stretch = daly(G6E_LAMBDA, 1 / 12, 1 / 6)
    assert round(tau * 60, 2) == 2366.93 and round(stretch, 7) == 1.0042487
    assert math.sqrt(2 * (1 / 12) / G6E_LAMBDA) * 60 == pytest.approx(2370.26, abs=0.01)  # Young, for comparison
    # Independent replicas: each spot node pays T times its 8760 h; 4.2149/h beats the 1y rate 6.61036/h, so
    # every node goes to spot (tolerance high).
    assert entry["coupling"] == "independent" and entry["advice"]["split"] == split(spot=4)
    assert entry["advice"]["describe"] == "4 spot"
    # 4 * 4.197056 * 8760 * 1.0042487 = 147,689.68, of which 4 * 4.197056 * 8760 * 0.0042487 = 624.84 is lost.
    assert entry["advice"]["total_usd"] == 147689.68 == round(4 * G6E_SPOT * 8760 * stretch, 2)
    assert entry["advice"]["lost_work_usd"] == 624.84
    assert entry["advice"]["per_month_usd"] == 12307.47  # 147,689.68 / 12
    assert entry["advice"]["checkpoint_minutes"] == 2366.9
    # Today: 4 * 10.49264 * 8760 = 367,662.11; saving 219,972.43 = 59.83 % of it.
    assert entry["current"]["total_usd"] == 367662.11
    assert (entry["status"], entry["saving_usd"], entry["saving_percent"]) == ("advice", 219972.43, 59.8)


# --- commitments over the horizon ------------------------------------------------------------------------------

# p5.48xlarge us-east-1: On-Demand 55.04 (AWS price list); no published 1y rate, so the p5 planning discounts:
# 1y 55.04 * (1 - 0.39) = 33.5744/h, 3y 55.04 * (1 - 0.635) = 20.0896/h; Capacity Blocks 41.528/h.


def test_a_horizon_past_one_term_buys_one_term_then_on_demand() -> None:
    months = 13.123456
    (entry,) = advise([node_group("a", "p5.48xlarge", 2, **NO_SPOT)], horizon_months=months)["pools"]
    # 13.123456 * 730 = 9580.12288 h: one 1y term (8760 h) then 820.12288 h On-Demand per node,
    # 8760 * 33.5744 + 820.12288 * 55.04 = 294,111.74 + 45,139.56 = 339,251.31 (two terms: 588,223.49; 3y:
    # 527,954.69; Capacity Blocks, 400 days billed as 182 + 182 + 42: 9744 h * 41.528 = 404,648.83).
    assert entry["advice"]["split"] == split(reserved_1y=2)
    assert entry["advice"]["total_usd"] == 678502.61  # 2 * 339,251.31
    assert entry["advice"]["commitments"] == [
        {
            "kind": "reserved-1y",
            "nodes": 2,
            "terms": 1,
            "committed_months": 12,
            "on_demand_months_after": 1.1235,  # 13.123456 - 12, to 4 places
            "unused_months": 0.0,
        }
    ]


def test_a_three_year_horizon_buys_three_year_terms() -> None:
    (entry,) = advise([node_group("a", "p5.48xlarge", 2, **NO_SPOT)], horizon_months=36)["pools"]
    # 36 * 730 = 26,280 h: 3y 20.0896 * 26,280 = 527,954.69 a node, against three 1y terms 882,335.23, Capacity
    # Blocks (1095 days, no rounding) 1,091,355.84 and On-Demand 1,446,451.20.
    assert entry["advice"]["split"] == split(reserved_3y=2)
    assert entry["advice"]["total_usd"] == 1055909.38  # 2 * 527,954.69
    assert entry["current"]["total_usd"] == 2892902.4  # 2 * 55.04 * 26,280


def test_todays_commitment_is_priced_at_its_own_discount() -> None:
    # A 1y commitment given as 20 % off: 10.49264 * 0.8 = 8.394112/h against the published 1y rate 6.61036/h.
    mine = (Commitment(match="g6e", kind="ri", term="1y", discount=0.2, count=2),)
    (entry,) = advise([node_group("c", "g6e.12xlarge", 2, **NO_SPOT)], commitments=mine)["pools"]
    assert entry["current"]["split"] == split(reserved_1y=2)
    assert entry["current"]["total_usd"] == 147064.84  # 2 * 8.394112 * 8760
    assert entry["advice"]["total_usd"] == 115813.51  # 2 * 6.61036 * 8760
    # The optimum is the split the pool already runs (two 1y commitments): nothing to change, whatever the rate.
    assert (entry["status"], entry["saving_usd"], entry["saving_percent"]) == ("already-optimal", 0.0, 0.0)


def test_a_three_year_commitment_with_its_own_discount_keeps_its_term() -> None:
    # 3y at 50 % off: 10.49264 * 0.5 = 5.24632/h. It used to count as 1y (the term was read from the rate source,
    # which names no term when the discount is given); now the engine records the commitment on the item.
    mine = (Commitment(match="g6e", kind="ri", term="3y", discount=0.5, count=2),)
    (entry,) = advise([node_group("c", "g6e.12xlarge", 2, **NO_SPOT)], commitments=mine)["pools"]
    assert entry["current"]["split"] == split(reserved_3y=2)
    # A term is paid whole, even over a 12-month horizon: 2 * 5.24632 * 26,280 h = 275,746.58 (as 1y it read
    # 2 * 5.24632 * 8,760 = 91,915.53).
    assert entry["current"]["total_usd"] == 275746.58


def test_the_same_pool_in_two_regions_gets_each_regions_optimum() -> None:
    pool = [node_group("g", "g5.12xlarge", 3, **NO_SPOT)]
    us = advise(pool, region="us-east-1")["pools"][0]
    eu = advise(pool, region="eu-west-1")["pools"][0]
    # Published 1y rates: us-east-1 3.57336/h, eu-west-1 3.98895/h; 3 nodes * 8760 h.
    assert us["advice"]["split"] == eu["advice"]["split"] == split(reserved_1y=3)
    assert us["advice"]["total_usd"] == 93907.90
    assert eu["advice"]["total_usd"] == 104829.61


# --- Capacity Blocks only ------------------------------------------------------------------------------------

# p5e.48xlarge us-east-1: no On-Demand SKU (so no commitment or spot estimate), Capacity Blocks 47.76/h.


def test_capacity_block_only_type_is_advised_on_capacity_blocks() -> None:
    advice = advise([node_group("cb", "p5e.48xlarge", 4, "CAPACITY_BLOCK")])
    (entry,) = advice["pools"]
    # 365 days of blocks: 182 + 182 + 1 days = 8760 h; 4 * 47.76 * 8760 = 1,673,510.40.
    assert entry["current"]["split"] == entry["advice"]["split"] == split(capacity_block=4)
    assert entry["current"]["total_usd"] == entry["advice"]["total_usd"] == 1673510.4
    assert entry["current"]["describe"] == "4 capacity-block"
    assert (entry["status"], entry["saving_usd"], entry["saving_percent"]) == ("already-optimal", 0.0, 0.0)
    assert (advice["advised"], advice["already_optimal"], advice["not_advised"]) == (0, 1, 0)


def test_more_nodes_than_capacity_blocks_hold_gets_the_optimisers_reason() -> None:
    (entry,) = advise([node_group("cb", "p5e.48xlarge", 300, "CAPACITY_BLOCK")])["pools"]
    assert (entry["status"], entry["nodes"], entry["advice"]) == ("no-advice", 300, None)
    assert entry["reason"] == (
        "p5e.48xlarge cannot be bought for 300 nodes here: it has no On-Demand or commitment price, at most 256 "
        "Capacity Block instances, and spot is not sold"
    )


# --- how pools are read ----------------------------------------------------------------------------------------


def test_pool_of_several_node_groups_adds_their_nodes_and_half_on_spot_stays_medium() -> None:
    labels = {"gpucloud.io/pool": "mixed"}
    groups = [
        node_group("od-a", "g6e.12xlarge", 1, **labels),
        node_group("od-b", "g6e.12xlarge", 1, **labels),
        node_group("spot", "g6e.12xlarge", 2, "SPOT", **labels),
    ]
    advice = advise(groups)
    (entry,) = advice["pools"]
    assert entry["nodes"] == 4 and entry["current"]["split"] == split(on_demand=2, spot=2)
    assert entry["current"]["describe"] == "2 on-demand + 2 spot"
    # Exactly half on spot is within medium's cap (at most half), so the pool keeps the default.
    assert entry["tolerance"] == "medium"
    # Items: 10.49264 * 730 = 7659.63 per On-Demand group, 2 * 4.197056 * 730 = 6127.70 for the spot group.
    assert entry["current"]["monthly_usd"] == 21446.96
    assert advice["region"] == "us-east-1"


def test_plan_without_a_region_is_advised_at_us_east_1() -> None:
    resources_ = [node_group("g", "g5.12xlarge", 3, **NO_SPOT)]
    cost = price_resources(resources_, PricingOptions(region="us-east-1"))
    del cost["region"]
    advice = mix_advice(resources_, cost, include_estimates=True)
    assert advice["region"] == "us-east-1"
    assert advice["pools"][0]["advice"]["total_usd"] == 93907.90  # 3 * 3.57336 * 8760, as above


def test_karpenter_labels_and_a_ceiling_type_without_nodes() -> None:
    pool = {
        "urn": f"urn:pulumi:s::p::{NODEPOOL}::np",
        "type": NODEPOOL,
        "name": "np",
        "custom": True,
        "inputs": {
            "metadata": {
                "labels": {"gpucloud.io/pool": "serve"},
                "annotations": {"gpucloud.io/expected-nodes": "2"},
            },
            "spec": {
                "template": {
                    "metadata": {"labels": {"gpucloud.io/workload": "inference"}},
                    "spec": {
                        "requirements": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": ["g6e.12xlarge", "p5.48xlarge"],
                            },
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                        ]
                    },
                },
                "limits": {"nvidia.com/gpu": "16"},
            },
        },
    }
    advice = advise([pool])
    # The engine prices the 2 expected nodes on the cheapest spot type (g6e.12xlarge) and the 16-GPU ceiling on
    # the dearest On-Demand fill (2 p5.48xlarge = 110.08/h over 4 g6e.12xlarge = 41.97/h) with no nodes: that
    # ceiling type is no pool of its own.
    assert [(p["pool"], p["instance_type"]) for p in advice["pools"]] == [("serve", "g6e.12xlarge")]
    (entry,) = advice["pools"]
    # The pool name from the NodePool's own labels, the workload from its node template's labels.
    assert (entry["nodes"], entry["coupling"], entry["workload"]) == (2, "independent", "inference")
    assert entry["current"]["split"] == split(spot=2)


def test_instance_tags_mark_the_pool_and_a_nameless_resource_is_named_by_its_urn() -> None:
    # The URN's name part is everything after the type, "::" included.
    instance = {
        "urn": "urn:pulumi:s::p::aws:ec2/instance:Instance::render::1",
        "type": "aws:ec2/instance:Instance",
        "custom": True,
        "inputs": {"instanceType": "g6e.12xlarge", "tags": {"gpucloud.io/workload": "rendering"}},
    }
    named = node_group("x", "g5.12xlarge", 1) | {"urn": f"urn:pulumi:s::p::{NG}::train::a", "name": "train::a"}
    pools = advise([instance, named])["pools"]
    assert [p["pool"] for p in pools] == ["render::1", "train::a"]
    assert (pools[0]["coupling"], pools[0]["workload"]) == ("independent", "rendering")


def test_price_book_without_the_type_gives_the_books_reason() -> None:
    resources_ = [node_group("g", "g6e.12xlarge", 2)]
    cost = price_resources(resources_, PricingOptions(region="us-east-1"))
    snapshot = copy.deepcopy(load_snapshot())
    del snapshot["regions"]["us-east-1"]["g6e.12xlarge"]
    (entry,) = mix_advice(resources_, cost, book=PriceBook(snapshot, CATALOG), include_estimates=True)["pools"]
    assert (entry["status"], entry["advice"], entry["current"]) == ("no-advice", None, None)
    assert entry["reason"] == (
        "g6e.12xlarge has no price in us-east-1 in the shipped snapshot (not sold there per its sources); run "
        "`gpucloud prices refresh --region us-east-1 --types g6e.12xlarge` to check"
    )


def test_a_catalog_given_prices_the_advice_with_its_own_discounts() -> None:
    # A catalog whose g6e spot estimate is 70 % off (10.49264 * 0.3 = 3.147792/h) and whose g5.xlarge has no GPU.
    families = [replace(f, spot_discount=0.7) if f.family == "g6e" else f for f in CATALOG.families.values()]
    specs = [replace(s, accelerator_count=0) if s.instance_type == "g5.xlarge" else s for s in CATALOG]
    catalog = Catalog(specs, families)
    marks = {"gpucloud.io/workload": "inference", "gpucloud.io/interruptible": "true"}
    resources_ = [node_group("inf", "g6e.12xlarge", 4, **marks), node_group("cpu", "g5.xlarge", 1)]
    cost = price_resources(resources_, PricingOptions(region="us-east-1"))
    advice = mix_advice(resources_, cost, catalog=catalog, include_estimates=True)
    (entry,) = advice["pools"]  # a type without accelerators is no GPU pool
    _, stretch = daly(G6E_LAMBDA, 1 / 12, 1 / 6)
    # 4 * 3.147792 * 8760 * 1.0042487 = 110,767.26
    assert entry["advice"]["total_usd"] == 110767.26 == round(4 * 3.147792 * 8760 * stretch, 2)


def test_refreshed_prices_reach_the_advice(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A refreshed 1y rate of 5.0/h for g6e.12xlarge in us-east-1 (the local price cache `prices refresh` writes).
    cache = tmp_path / "prices.json"
    cache.write_text(
        '{"schema": "gpucloud.prices/v1", "refreshed_at": "2026-08-02T09:30:00+00:00", "regions": {"us-east-1": '
        '{"g6e.12xlarge": {"reserved_1y_usd": 5.0, "price_date": "2026-08-02", '
        '"price_source": "aws-price-list-api"}}}}'
    )
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    get_price_book.cache_clear()
    try:
        (entry,) = advise([node_group("c", "g6e.12xlarge", 2, **NO_SPOT)])["pools"]
    finally:
        get_price_book.cache_clear()
    assert entry["advice"]["split"] == split(reserved_1y=2)
    assert entry["advice"]["total_usd"] == 87600.0  # 2 * 5.0 * 8760


def test_horizon_under_a_month_is_accepted() -> None:
    assert validate_horizon(0.5) == 0.5
    assert validate_horizon(1) == 1.0


def test_unpriced_nodes_count_in_the_pool() -> None:
    # g6.12xlarge has no eu-west-1 price: the engine lists the group's nodes as unpriced, and the pool says so.
    resources_ = [node_group("l4", "g6.12xlarge", 3)]
    (entry,) = advise(resources_, region="eu-west-1")["pools"]
    assert (entry["pool"], entry["nodes"], entry["status"]) == ("l4", 3, "no-advice")
    assert entry["resources"] == [f"urn:pulumi:s::p::{NG}::l4"]
