"""recommend and mix: memory arithmetic, ranking, EFA flags, Young/Daly, the pool fragment, and the CLI."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml

from gpucloud.advisor import MixRequest, WorkloadSpec, memory_requirement, plan_mix, recommend, young_daly
from gpucloud.cli import main
from gpucloud.spec import NodePoolSpec

GIB = 1024**3


def test_training_memory_is_16_bytes_per_param_plus_activation_headroom() -> None:
    total, lines = memory_requirement(WorkloadSpec(kind="training", params_b=7))
    assert total == pytest.approx(7e9 * 16 / GIB * 1.25)
    assert lines[0].startswith("weights + gradients + optimizer state: 7e9 params x 16 B/param")
    assert lines[1] == f"activations headroom: +25% = {7e9 * 16 / GIB * 1.25:,.1f} GiB"


def test_inference_memory_is_weights_plus_kv_cache_headroom() -> None:
    total, lines = memory_requirement(WorkloadSpec(kind="inference", params_b=70, precision="fp8"))
    assert total == pytest.approx(70e9 / GIB * 1.3)
    assert lines == [
        f"weights: 70e9 params x 1 B/param (fp8) = {70e9 / GIB:,.1f} GiB",
        f"KV cache and activations headroom: +30% = {70e9 / GIB * 1.3:,.1f} GiB",
    ]


def test_training_ranked_by_bf16_single_node_excludes_what_does_not_fit() -> None:
    result = recommend(WorkloadSpec(kind="training", params_b=30), top=50)
    need = 30e9 * 16 / GIB * 1.25  # 558.8 GiB: one 8x H100 node (8 x 72 usable GiB = 576) holds it
    assert result["memory"]["required_gib"] == round(need, 1)
    names = [c["instance_type"] for c in result["candidates"]]
    assert "p5.48xlarge" in names and "g5.xlarge" not in names
    excluded = {e["instance_type"]: e["reason"] for e in result["excluded"]}
    assert excluded["g5.xlarge"] == "needs 28 accelerators (28 nodes) but the workload is single-node"
    assert excluded["g4dn.xlarge"] == "no BF16 PFLOPS figure"  # T4
    assert excluded["p3.2xlarge"] == "deprecated"
    costs = [c["cost_per_unit_hour"] for c in result["candidates"]]
    assert costs == sorted(costs)
    p5 = next(c for c in result["candidates"] if c["instance_type"] == "p5.48xlarge")
    assert p5["cost_per_unit_hour"] == round(55.04 / (8 * 989 / 1000), 4)


def test_multi_node_training_flags_types_without_efa() -> None:
    result = recommend(WorkloadSpec(kind="training", params_b=70, multi_node=True), top=100)
    flags = {c["instance_type"]: c["flags"] for c in result["candidates"]}
    assert flags["g6.48xlarge"] == ["only 1 EFA interfaces for 8 accelerators"]
    assert flags["g5.xlarge"] == ["no EFA: multi-node collectives over TCP will bottleneck"]
    assert flags["p5.48xlarge"] == []
    # Non-EFA types sort after every EFA type for multi-node training.
    efa = [c["efa"] for c in result["candidates"]]
    assert efa == sorted(efa, reverse=True)


def test_hpc_ranks_by_fp64_and_efa_requirement_excludes() -> None:
    result = recommend(WorkloadSpec(kind="hpc", memory_gib=40, interconnect="efa", multi_node=True), top=3)
    assert result["metric"]["key"] == "fp64"
    assert all(c["efa"] for c in result["candidates"])
    assert {"instance_type": "g5.xlarge", "reason": "no EFA, and EFA was required"} in result["excluded"]


def test_young_daly_reference_example() -> None:
    young, daly = young_daly(120, 21600)
    assert round(young) == 2277 and round(young / 60) == 38
    assert round(daly) == 2157  # about 36 min


def test_mix_arithmetic_and_fragment_parses_with_gpucloud_spec() -> None:
    result = plan_mix(
        MixRequest("g6e.12xlarge", nodes=8, duration_months=6, tolerance="medium", checkpoint_seconds=120)
    )
    od = 10.49264
    spot = od * (1 - 0.60)  # the catalog's g6e planning midpoint
    by = {o["option"]: o for o in result["options"]}
    assert by["all-on-demand"]["monthly"] == round(8 * od * 730, 2)
    assert by["all-spot"]["monthly"] == round(8 * spot * 730, 2)
    assert by["reserved-1y"]["note"].startswith("a 12-month commitment outlives the 6-month job")
    assert by["reserved-1y"]["total"] == round(8 * od * (1 - 0.37) * 730 * 12, 2)
    # medium tolerance: 25% stays on-demand (2 nodes), 6 spot; bucket for g6e from the catalog.
    bucket = result["prices"]["interruption_bucket"]
    rate = {0: 0.025, 1: 0.075, 2: 0.125, 3: 0.175, 4: 0.25}[bucket]
    mix = by["best-mix"]
    assert (mix["on_demand_nodes"], mix["spot_nodes"]) == (2, 6)
    per_day = 6 * rate / (365 / 12)
    assert mix["interruptions_per_day"] == round(per_day, 3)
    assert mix["checkpoint_interval_minutes"] == round(math.sqrt(2 * 120 * 86400 / per_day) / 60, 1)
    assert result["recommended"] == "best-mix"
    fragment = yaml.safe_load(result["node_pools_yaml"])
    pool = NodePoolSpec.model_validate(fragment["nodePools"][0])
    assert (pool.capacity.on_demand_base, pool.capacity.on_demand_percentage_above_base, pool.backend) == (
        2,
        0,
        "self-managed",
    )


def test_mix_no_tolerance_never_spot_and_long_job_reserves() -> None:
    result = plan_mix(MixRequest("p5.48xlarge", nodes=4, duration_months=36, tolerance="none"))
    assert result["recommended"] == "reserved-3y"
    assert yaml.safe_load(result["pricing_yaml"]) == {
        "gpucloud:pricing": {"commitments": [{"match": "p5", "kind": "savings-plan", "term": "3y", "count": 4}]}
    }
    pool = NodePoolSpec.model_validate(yaml.safe_load(result["node_pools_yaml"])["nodePools"][0])
    assert pool.capacity.on_demand_percentage_above_base == 100 and not pool.spot_nodes_possible


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_recommend_and_mix_json_and_text(capsys: Any) -> None:
    code, out, _ = run_cli(capsys, "recommend", "inference", "--params", "8", "--format", "json", "--top", "3")
    data = json.loads(out)
    assert code == 0 and data["metric"]["key"] == "memory" and len(data["candidates"]) == 3
    code, out, _ = run_cli(capsys, "recommend", "training", "--params", "7")
    assert code == 0 and "Ranked by $ per BF16 PFLOP-hour" in out and "16 B/param" in out
    code, out, _ = run_cli(capsys, "mix", "p5.48xlarge", "--nodes", "4", "--format", "json")
    assert code == 0 and json.loads(out)["nodes"] == 4
    code, out, _ = run_cli(capsys, "mix", "p5.48xlarge", "--nodes", "4", "--format", "yaml")
    assert code == 0 and yaml.safe_load(out)["nodePools"][0]["instanceTypes"] == ["p5.48xlarge"]
    code, out, _ = run_cli(capsys, "mix", "p5.48xlarge", "--nodes", "4")
    assert code == 0 and "Young" not in out and "checkpoint every" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["recommend", "training"], "give the model size (--params"),
        (["recommend", "training", "--params", "-1"], "--params must be positive"),
        (["recommend", "training", "--params", "7", "--precision", "int4"], "training precision 'int4'"),
        (["recommend", "inference", "--memory-gib", "10", "--gpus", "0"], "--gpus must be at least 1"),
        (["mix", "p5.48xlarg", "--nodes", "2"], "unknown instance type 'p5.48xlarg'"),
        (["mix", "p5e.48xlarge", "--nodes", "2"], "no On-Demand price (Capacity Blocks only)"),
        (["mix", "p5.48xlarge", "--nodes", "0"], "--nodes must be at least 1"),
        (["mix", "m7i.xlarge", "--nodes", "2"], "'m7i.xlarge' is not in the gpucloud catalog"),
    ],
)
def test_cli_bad_input_exit_2(capsys: Any, argv: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err
