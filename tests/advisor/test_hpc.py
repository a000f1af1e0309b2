"""`gpucloud recommend hpc`: FP64 throughput per dollar, types without meaningful FP64 excluded (issue 27)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpucloud.advisor.hpc import FP64_RATIO, HpcInputError, recommend_hpc


def reasons(result: dict) -> dict[str, str]:
    return {e["instance_type"]: e["reason"] for e in result["excluded"]}


def test_ranks_by_fp64_tflops_per_dollar() -> None:
    result = recommend_hpc()
    rates = [c["tflops_per_usd_hour"] for c in result["candidates"]]
    assert rates == sorted(rates, reverse=True)
    # H200 at the $47.76/h block rate: 8 x 34 / 47.76 = 5.70 TFLOPS per $/h, ahead of p5.48xlarge's 8 x 34 / 55.04.
    first = result["candidates"][0]
    assert first["instance_type"] == "p5e.48xlarge"
    assert first["tflops_per_usd_hour"] == pytest.approx(8 * 34 / 47.76)
    assert first["flags"] == ["Capacity Blocks only: block rate, billed in whole block days"]


def test_graphics_gpus_and_neuron_chips_are_excluded_with_their_source() -> None:
    why = reasons(recommend_hpc())
    assert why["g6e.xlarge"].startswith("no meaningful FP64 on L40S: NVIDIA Ada architecture whitepaper")
    assert why["g5.xlarge"].startswith("no meaningful FP64 on A10G")
    assert why["g4dn.xlarge"].startswith("no meaningful FP64 on T4")
    assert why["trn2.48xlarge"] == f"no meaningful FP64 on Trainium2: {FP64_RATIO['Trainium2'][1]}"
    assert "inf2.48xlarge" in why
    kept = {c["accelerator"] for c in recommend_hpc(top=100)["candidates"]}
    assert kept <= {"V100", "V100-32GB", "A100-40GB", "A100-80GB", "H100", "H200", "B200"}


def test_tensor_core_fp64_doubles_hopper_and_ampere() -> None:
    vector = {c["instance_type"]: c for c in recommend_hpc(top=100)["candidates"]}
    tensor = {c["instance_type"]: c for c in recommend_hpc(fp64="tensor", top=100)["candidates"]}
    assert tensor["p5.48xlarge"]["node_fp64_tflops"] == 8 * 67 and vector["p5.48xlarge"]["node_fp64_tflops"] == 8 * 34
    assert tensor["p4d.24xlarge"]["fp64_kind"] == "tensor"
    # The catalog has no FP64 tensor figure for B200 (only the unconfirmed 37 vector): the vector rate counts.
    assert tensor["p6-b200.48xlarge"]["fp64_kind"] == "vector"
    assert tensor["p6-b200.48xlarge"]["node_fp64_tflops"] == 8 * 37
    assert reasons(recommend_hpc())["p3.16xlarge"] == "deprecated"


def test_work_and_deadline_give_nodes_and_cost() -> None:
    result = recommend_hpc(work_pflop=5e6, deadline_days=7, top=100)
    p5 = next(c for c in result["candidates"] if c["instance_type"] == "p5.48xlarge")
    node_hours = 5e6 * 1e15 / (272e12 * 3600)
    assert p5["nodes"] == 31 == -(-node_hours // (7 * 24))
    assert p5["cost_usd"] == pytest.approx(55.04 * node_hours)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"work_pflop": -1.0}, "--work must be a positive number"),
        ({"deadline_days": 7.0}, "--deadline-days needs --work"),
    ],
)
def test_bad_input_names_the_flag(kwargs: dict, message: str) -> None:
    with pytest.raises(HpcInputError, match=message):
        recommend_hpc(**kwargs)


def test_cli_hpc_json_and_bad_input_exit_2() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "gpucloud", "recommend", "hpc", "--format", "json", "--top", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["schema"] == "gpucloud.recommend-hpc/v1" and len(data["candidates"]) == 2
    bad = subprocess.run(
        [sys.executable, "-m", "gpucloud", "recommend", "hpc", "--work", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "--work must be a positive number" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_json_output_follows_its_schema_with_and_without_work() -> None:
    import json
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("gpucloud.advisor").joinpath("recommend-hpc.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for result in (recommend_hpc(), recommend_hpc(work_pflop=5e6, deadline_days=7, fp64="tensor", top=100)):
        validator.validate(result)
    # The schema is not vacuous: a candidate without its FP64 source, or an extra top-level key, is refused.
    bad = recommend_hpc()
    del bad["candidates"][0]["fp64_source"]
    assert not validator.is_valid(bad)
    assert not validator.is_valid({**recommend_hpc(), "extra": 1})
