"""The plan's mix advice: every GPU pool's `gpucloud mix` optimum beside its split today, in every format.

Expected figures are rebuilt here from the shipped snapshot JSON and the catalog's family discounts (not through
the price book), then run through the optimiser (gpucloud.advisor.mix, checked against a brute force in
test_mix.py) with the pool's inputs.
"""

from __future__ import annotations

import argparse
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from gpucloud.advisor.mix import MixRequest, NodeRates, optimise, price_split
from gpucloud.advisor.plan_advice import MixHorizonError, mix_advice, validate_horizon
from gpucloud.advisor.rates import bucket_rate_per_hour
from gpucloud.catalog import Catalog
from gpucloud.cli import main
from gpucloud.cli.errors import CliError
from gpucloud.cli.plan import mix_horizon
from gpucloud.cost import Commitment, PricingOptions, price_resources
from gpucloud.report import SCHEMA, empty_policies, validate_report

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Catalog.load()
RAW: dict[str, Any] = json.loads(resources.files("gpucloud.prices").joinpath("snapshot.json").read_text())
NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
HOURS = 730 * 12
NO_SPLIT = {"on_demand": 0, "reserved_1y": 0, "reserved_3y": 0, "capacity_block": 0, "spot": 0}


def split(**counts: int) -> dict[str, int]:
    return {**NO_SPLIT, **counts}


def snapshot_rates(itype: str, region: str) -> NodeRates:
    """The optimiser's rates from the snapshot file: published figures, else the family's planning discounts."""
    entry = RAW["regions"][region][itype]
    fam = CATALOG.family_pricing(CATALOG.get(itype).family)
    od = entry["on_demand"]["usd"]
    r1 = entry["reserved_1y"]["usd"] if "reserved_1y" in entry else round(od * (1 - fam.reserved_1y), 6)
    return NodeRates(
        on_demand=od,
        spot=round(od * (1 - fam.spot_discount), 6),
        reserved_1y=r1,
        reserved_3y=round(od * (1 - fam.reserved_3y), 6),
        capacity_block=entry["capacity_block"]["usd"] if "capacity_block" in entry else None,
        interruption_rate_per_hour=bucket_rate_per_hour(fam.spot_interruption_bucket),
        spot_source="test",
        interruption_source="test",
        price_date=None,
    )


def expected(
    itype: str, region: str, today: dict[str, int], tolerance: str, coupling: str, months: float = 12.0
) -> tuple[dict[str, int], float, float]:
    """(optimum split, its total, today's total) over the horizon."""
    rates = snapshot_rates(itype, region)
    req = MixRequest(itype, sum(today.values()), months, tolerance, coupling=coupling)  # type: ignore[arg-type]
    result = optimise(req, rates)
    current = price_split(today, rates, req, result["rate"], "current")
    return result["best"]["split"], result["best"]["cost"]["total_usd"], current["cost"]["total_usd"]


def node_group(name: str, itype: str, desired: int, capacity: str = "ON_DEMAND", **labels: str) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:s::p::{NG}::{name}",
        "type": NG,
        "name": name,
        "parent": None,
        "custom": True,
        "dependencies": [],
        "inputs": {
            "instanceTypes": [itype],
            "capacityType": capacity,
            "scalingConfig": {"desiredSize": desired, "maxSize": desired + 2},
            "labels": labels,
        },
    }


def advise(resources_: list[dict[str, Any]], region: str = "us-east-1", **kw: Any) -> dict[str, Any]:
    cost = price_resources(resources_, PricingOptions(region=region, commitments=kw.pop("commitments", ())))
    # The optimiser's arithmetic with every rate, estimates included (the default leaves estimate-based advice out).
    kw.setdefault("include_estimates", True)
    return mix_advice(resources_, cost, **kw)


def by_pool(advice: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(p["pool"], p["instance_type"]): p for p in advice["pools"]}


# --- how a pool is read --------------------------------------------------------------------------------------


def test_non_interruptible_pool_gets_no_spot() -> None:
    marked = node_group("a", "p5.48xlarge", 2, **{"gpucloud.io/interruptible": "false"})
    unmarked = node_group("b", "p5.48xlarge", 2)
    pools = by_pool(advise([marked, unmarked]))
    assert pools[("a", "p5.48xlarge")]["tolerance"] == "none"
    assert pools[("a", "p5.48xlarge")]["advice"]["split"] == split(reserved_1y=2)
    assert pools[("b", "p5.48xlarge")]["advice"]["split"] == split(reserved_1y=1, spot=1)


def test_non_interruptible_pool_on_spot_is_told_to_leave_it() -> None:
    spot = node_group("s", "g6e.12xlarge", 2, "SPOT", **{"gpucloud.io/interruptible": "False"})
    entry = advise([spot])["pools"][0]
    best, best_total, today_total = expected("g6e.12xlarge", "us-east-1", split(spot=2), "none", "synchronous")
    assert entry["status"] == "advice" and entry["advice"]["split"] == best == split(reserved_1y=2)
    assert entry["saving_usd"] == round(today_total - best_total, 2) < 0
    assert entry["reason"] == (
        "2 spot nodes exceed what tolerance none allows (0): gpucloud.io/interruptible=false: no spot"
    )


def test_interruptible_true_allows_all_spot() -> None:
    entry = advise([node_group("t", "g6e.12xlarge", 4, **{"gpucloud.io/interruptible": "true"})])["pools"][0]
    best, _, _ = expected("g6e.12xlarge", "us-east-1", split(on_demand=4), "high", "synchronous")
    assert entry["tolerance"] == "high" and entry["advice"]["split"] == best


def test_eu_west_1_plan_uses_eu_west_1_prices() -> None:
    eu = advise([node_group("g", "g5.12xlarge", 3)], region="eu-west-1")
    us = advise([node_group("g", "g5.12xlarge", 3)], region="us-east-1")
    entry = eu["pools"][0]
    od = RAW["regions"]["eu-west-1"]["g5.12xlarge"]["on_demand"]["usd"]
    assert eu["region"] == "eu-west-1" and entry["current"]["total_usd"] == round(3 * od * HOURS, 2)
    best, best_total, _ = expected("g5.12xlarge", "eu-west-1", split(on_demand=3), "medium", "synchronous")
    assert entry["advice"]["split"] == best and entry["advice"]["total_usd"] == round(best_total, 2)
    assert us["pools"][0]["current"]["total_usd"] != entry["current"]["total_usd"]


def test_type_not_sold_in_the_region_gets_no_advice_with_the_reason() -> None:
    advice = advise([node_group("l4", "g6.12xlarge", 2)], region="eu-west-1")
    (entry,) = advice["pools"]
    assert (entry["status"], entry["nodes"], entry["advice"], entry["current"]) == ("no-advice", 2, None, None)
    assert entry["reason"].startswith(
        "not priced in eu-west-1: g6.12xlarge has no price in eu-west-1 in the shipped snapshot"
    )
    assert (advice["advised"], advice["not_advised"], advice["saving_usd"]) == (0, 1, 0.0)


def test_pool_without_nodes_gets_no_advice() -> None:
    (entry,) = advise([node_group("idle", "g6e.12xlarge", 0)])["pools"]
    assert entry["status"] == "no-advice" and entry["nodes"] == 0
    assert entry["reason"].startswith("no nodes at the expected size")


def test_cpu_pools_are_not_advised() -> None:
    assert advise([node_group("sys", "m7i.xlarge", 3)])["pools"] == []


def test_one_pool_label_joins_its_node_groups_and_inference_is_independent() -> None:
    labels = {"gpucloud.io/pool": "serve", "gpucloud.io/workload": "inference"}
    od = node_group("serve-od", "g6e.12xlarge", 3, **labels)
    spot = node_group("serve-spot", "g6e.12xlarge", 1, "SPOT", **labels)
    (entry,) = advise([od, spot])["pools"]
    assert (entry["pool"], entry["nodes"], entry["coupling"], entry["workload"]) == (
        "serve",
        4,
        "independent",
        "inference",
    )
    assert entry["current"]["split"] == split(on_demand=3, spot=1)
    assert entry["resources"] == [od["urn"], spot["urn"]]
    assert entry["current"]["monthly_usd"] == round(3 * 10.49264 * 730, 2) + round(4.197056 * 730, 2)


def test_unmarked_workload_counts_as_synchronous_training() -> None:
    (entry,) = advise([node_group("x", "g6e.12xlarge", 2)])["pools"]
    assert (entry["workload"], entry["coupling"], entry["tolerance"]) == (
        "training (unmarked)",
        "synchronous",
        "medium",
    )
    assert entry["tolerance_from"] == "unmarked: the gpucloud mix default, at most half the nodes on spot"


def test_asg_node_template_labels_and_mixed_split() -> None:
    lt = {
        "urn": "urn:pulumi:s::p::aws:ec2/launchTemplate:LaunchTemplate::lt",
        "type": "aws:ec2/launchTemplate:LaunchTemplate",
        "name": "lt",
        "custom": True,
        "inputs": {"instanceType": "g6e.12xlarge"},
    }
    template = "k8s.io/cluster-autoscaler/node-template/label/"
    asg = {
        "urn": f"urn:pulumi:s::p::{ASG}::asg",
        "type": ASG,
        "name": "asg",
        "custom": True,
        "dependencies": [lt["urn"]],
        "inputs": {
            "desiredCapacity": 4,
            "maxSize": 6,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 1, "onDemandPercentageAboveBaseCapacity": 0},
                "launchTemplate": {"launchTemplateSpecification": {"name": "lt"}},
            },
            "tags": [
                {"key": f"{template}gpucloud.io/pool", "value": "render"},
                {"key": f"{template}gpucloud.io/workload", "value": "rendering"},
            ],
        },
    }
    (entry,) = advise([lt, asg])["pools"]
    assert (entry["pool"], entry["coupling"]) == ("render", "independent")
    # 3 of 4 on spot today is over medium's half: the pool's own configuration says it tolerates more.
    assert entry["current"]["split"] == split(on_demand=1, spot=3) and entry["tolerance"] == "high"
    assert entry["tolerance_from"] == "unmarked; the pool already runs 75% of its nodes on spot"
    best, _, _ = expected("g6e.12xlarge", "us-east-1", split(on_demand=1, spot=3), "high", "independent")
    assert entry["advice"]["split"] == best


def test_karpenter_nodepool_at_its_expected_size() -> None:
    pool = {
        "urn": f"urn:pulumi:s::p::{NODEPOOL}::np",
        "type": NODEPOOL,
        "name": "np",
        "custom": True,
        "inputs": {
            "metadata": {"annotations": {"gpucloud.io/expected-nodes": "3"}},
            "spec": {
                "template": {
                    "metadata": {"labels": {"gpucloud.io/workload": "training"}},
                    "spec": {
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        ]
                    },
                },
                "limits": {"nvidia.com/gpu": "32"},
            },
        },
    }
    (entry,) = advise([pool])["pools"]
    assert (entry["pool"], entry["nodes"], entry["current"]["split"]) == ("np", 3, split(on_demand=3))
    best, best_total, _ = expected("p5.48xlarge", "us-east-1", split(on_demand=3), "medium", "synchronous")
    assert entry["advice"]["split"] == best and entry["advice"]["total_usd"] == round(best_total, 2)


def test_committed_nodes_today_are_priced_at_their_commitment() -> None:
    ng = node_group("c", "g6e.12xlarge", 2)
    three = advise([ng], commitments=(Commitment(match="g6e", kind="ri", term="3y", count=2),))
    (entry,) = three["pools"]
    assert entry["current"]["split"] == split(reserved_3y=2)
    fam = CATALOG.family_pricing("g6e")
    rate = 10.49264 * (1 - fam.reserved_3y)
    # A 3y term bills 36 months whatever the horizon: today's 2 nodes cost two whole terms.
    assert entry["current"]["total_usd"] == pytest.approx(2 * rate * 730 * 36, abs=0.02)
    # One node, medium tolerance: no spot, and the published 1y rate is the cheapest plan, so nothing to advise.
    single = node_group("c", "g6e.12xlarge", 1)
    one = advise([single], commitments=(Commitment(match="g6e", kind="ri", term="1y", count=1),))
    assert one["pools"][0]["current"]["split"] == split(reserved_1y=1)
    assert one["pools"][0]["status"] == "already-optimal" and one["pools"][0]["saving_usd"] == 0.0


def test_horizon_changes_the_advice() -> None:
    short = advise([node_group("h", "p5.48xlarge", 2)], horizon_months=3)
    (entry,) = short["pools"]
    best, best_total, today_total = expected("p5.48xlarge", "us-east-1", split(on_demand=2), "medium", "synchronous", 3)
    assert short["horizon_months"] == 3.0 and entry["advice"]["split"] == best
    assert entry["advice"]["total_usd"] == round(best_total, 2) and entry["current"]["total_usd"] == round(
        today_total, 2
    )
    assert best["reserved_1y"] == 0  # a 12-month term does not pay for a 3-month horizon


# --- flags and validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "12", True])
def test_horizon_validation(bad: Any) -> None:
    with pytest.raises(MixHorizonError, match=r"e\.g\. --mix-horizon 12"):
        validate_horizon(bad)
    with pytest.raises(MixHorizonError):
        advise([node_group("g", "g6e.xlarge", 1)], horizon_months=bad)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "argument --mix-horizon: a mix horizon of 0 months: give more than 0 months, e.g. --mix-horizon 12"),
        ("-2", "argument --mix-horizon: a mix horizon of -2 months: give more than 0 months, e.g. --mix-horizon 12"),
        ("soon", "argument --mix-horizon: 'soon' is not a number of months; give e.g. --mix-horizon 12"),
    ],
)
def test_mix_horizon_flag_errors(capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    assert main(["plan", "--stack", "dev", f"--mix-horizon={value}"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_mix_horizon_from_the_flags() -> None:
    assert mix_horizon(argparse.Namespace(mix_horizon=None, no_mix_advice=False)) == 12.0
    assert mix_horizon(argparse.Namespace(mix_horizon=6.0, no_mix_advice=False)) == 6.0
    assert mix_horizon(argparse.Namespace(mix_horizon=None, no_mix_advice=True)) is None
    with pytest.raises(CliError, match="--mix-horizon and --no-mix-advice contradict each other"):
        mix_horizon(argparse.Namespace(mix_horizon=6.0, no_mix_advice=True))


# --- every format ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    resources_ = [
        node_group("train", "g5.12xlarge", 2, **{"gpucloud.io/workload": "training"}),
        node_group("serve", "g5.xlarge", 2, "SPOT", **{"gpucloud.io/workload": "inference"}),
        node_group("l4", "g6.12xlarge", 1),
    ]
    cost = price_resources(resources_, PricingOptions(region="eu-west-1"))
    return {
        "schema": SCHEMA,
        "project": "p",
        "stack": "s",
        "resources": resources_,
        "cost": cost,
        "policies": empty_policies(),
        "mix_advice": mix_advice(resources_, cost, include_estimates=True),
    }


def test_report_with_advice_follows_the_schema(report: dict[str, Any]) -> None:
    validate_report(report)
    statuses = [p["status"] for p in report["mix_advice"]["pools"]]
    assert statuses == ["advice", "already-optimal", "no-advice"]
    assert report["cost"]["unpriced"][0] | {"reason": ""} == {
        "urn": "urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::l4",
        "reason": "",
        "instance_type": "g6.12xlarge",
        "market": "on-demand",
        "nodes": 1,
        "max_nodes": 3,
    }


def test_text_fits_80_columns(report: dict[str, Any]) -> None:
    from gpucloud.report.render import render_text

    text = render_text(report, width=80)
    section = text[text.index("Capacity-mix advice (12-month horizon, USD)") :]
    assert max(len(line) for line in section.splitlines()) <= 80
    flat = " ".join(section.split())  # rich wraps lines at 80 columns
    assert "already optimal" in flat and "no advice" in flat
    assert "Mix advice: 1 pool could save $" in flat
    assert "1 already optimal, 1 without advice (eu-west-1 rates)" in flat
    assert re.search(r"train \(g5\.12xlarge\): checkpoint every [\d.]+ min", flat)
    assert "l4 (g6.12xlarge): not priced in eu-west-1" in flat


def test_markdown_has_a_collapsible_section(report: dict[str, Any]) -> None:
    from gpucloud.report.render import render_markdown

    text = render_markdown(report)
    assert "<details><summary>Capacity-mix advice: 1 pool could save $" in text
    serve = next(p for p in report["mix_advice"]["pools"] if p["pool"] == "serve")
    assert f"| `serve` | g5.xlarge | 2 | {serve['current']['describe']} | already optimal |  |" in text
    # The advice sits in the summary, before the detail sections.
    assert text.index("Capacity-mix advice") < text.index("Cost (USD per month)")


def test_html_has_the_advice_table(report: dict[str, Any]) -> None:
    from gpucloud.report.visual import render_html

    page = render_html(report)
    assert "<h2>Capacity-mix advice (12-month horizon, USD)</h2>" in page
    train = next(p for p in report["mix_advice"]["pools"] if p["pool"] == "train")
    assert f'data-v="{train["saving_usd"]}"' in page
    assert "<td>no-advice</td>" in page


def test_report_without_advice_renders_as_before(report: dict[str, Any]) -> None:
    from gpucloud.report.render import render_markdown, render_text
    from gpucloud.report.visual import render_html

    bare = {k: v for k, v in report.items() if k != "mix_advice"}
    assert "Capacity-mix" not in render_text(bare) + render_markdown(bare) + render_html(bare)


def test_whole_entry_of_an_advised_and_an_idle_pool() -> None:
    marks = {"gpucloud.io/interruptible": "false", "gpucloud.io/workload": "hpc"}
    (entry,) = advise([node_group("a", "p5.48xlarge", 2, **marks)])["pools"]
    od = RAW["regions"]["us-east-1"]["p5.48xlarge"]["on_demand"]["usd"]
    r1 = round(od * (1 - CATALOG.family_pricing("p5").reserved_1y), 6)
    assert entry == {
        "pool": "a",
        "resources": ["urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::a"],
        "instance_type": "p5.48xlarge",
        "nodes": 2,
        "workload": "hpc",
        "coupling": "synchronous",
        "tolerance": "none",
        "tolerance_from": "gpucloud.io/interruptible=false: no spot",
        "status": "advice",
        "reason": None,
        "current": {
            "split": split(on_demand=2),
            "describe": "2 on-demand",
            "monthly_usd": round(2 * od * 730, 2),
            "total_usd": round(2 * od * HOURS, 2),
            "lost_work_usd": 0.0,
        },
        "advice": {
            "split": split(reserved_1y=2),
            "describe": "2 reserved-1y",
            "total_usd": round(2 * r1 * HOURS, 2),
            "lost_work_usd": 0.0,
            "per_month_usd": round(2 * r1 * 730, 2),
            "checkpoint_minutes": None,
            "commitments": [
                {
                    "kind": "reserved-1y",
                    "nodes": 2,
                    "terms": 1,
                    "committed_months": 12,
                    "on_demand_months_after": 0.0,
                    "unused_months": 0.0,
                }
            ],
        },
        "saving_usd": round(2 * (od - r1) * HOURS, 2),
        "saving_percent": round(100 * (od - r1) / od, 1),
        # p5 has no published 1-year RI rate in the snapshot: the 1y rate is the family's planning discount.
        "saving_basis": "estimate",
        "estimated_rates": {
            "reserved_1y": "commitment estimate: On-Demand x (1 - the family's planning Reserved Instance discount)"
        },
    }
    (idle,) = advise([node_group("idle", "g6e.12xlarge", 0)])["pools"]
    assert idle == {
        "pool": "idle",
        "resources": ["urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::idle"],
        "instance_type": "g6e.12xlarge",
        "nodes": 0,
        "workload": "training (unmarked)",
        "coupling": "synchronous",
        "tolerance": "medium",
        "tolerance_from": "unmarked: the gpucloud mix default, at most half the nodes on spot",
        "status": "no-advice",
        "reason": "no nodes at the expected size (desired 0, or a Karpenter NodePool without an expected size): "
        "the optimiser advises a steady node count",
        "current": None,
        "advice": None,
        "saving_usd": None,
        "saving_percent": None,
    }


def test_section_totals() -> None:
    advice = advise([node_group("a", "p5.48xlarge", 2), node_group("b", "g6e.12xlarge", 0)], horizon_months=24)
    assert {k: v for k, v in advice.items() if k != "pools"} == {
        "horizon_months": 24.0,
        "region": "us-east-1",
        "model": "gpucloud mix optimiser (gpucloud.advisor.mix): On-Demand, 1y/3y whole terms, Capacity Blocks and "
        "spot with the work interruptions destroy (Daly 2006), over the horizon; see docs/advisor.md",
        "advised": 1,
        "already_optimal": 0,
        "not_advised": 1,
        # The 24-month optimum for p5.48xlarge rests on a planning (estimated) commitment rate: apart from the
        # published-rate total.
        "saving_usd": 0.0,
        "include_estimates": True,
        "estimated_saving_usd": advice["pools"][0]["saving_usd"],
    }
    assert advice["pools"][0]["saving_basis"] == "estimate"


def test_without_estimates_no_saving_rests_on_an_estimated_rate() -> None:
    # The same pool as above without --include-estimates: p5's 1y and 3y rates and spot are planning estimates, so
    # the optimiser is left On-Demand and Capacity Blocks (published), and no saving is claimed from estimates.
    marks = {"gpucloud.io/interruptible": "false", "gpucloud.io/workload": "hpc"}
    advice = advise([node_group("a", "p5.48xlarge", 2, **marks)], include_estimates=False)
    (entry,) = advice["pools"]
    assert entry["status"] in ("no-advice", "already-optimal", "advice")
    assert entry.get("saving_basis") != "estimate" or entry["status"] == "no-advice"
    assert advice["include_estimates"] is False and advice["estimated_saving_usd"] is None
    published = sum(p["saving_usd"] for p in advice["pools"] if p["status"] == "advice")
    assert advice["saving_usd"] == round(published, 2)
    # g6e has a published 1-year RI rate in the snapshot (Vantage, 2026-01): that advice stands without estimates.
    (g6e,) = advise([node_group("g", "g6e.12xlarge", 1, **marks)], include_estimates=False)["pools"]
    assert g6e["status"] == "advice" and g6e["saving_basis"] == "published"
    assert g6e["advice"]["split"]["reserved_1y"] == 1
