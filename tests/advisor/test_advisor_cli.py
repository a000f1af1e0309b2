"""`gpucloud mix` and `gpucloud recommend` on the command line: JSON against the documented schemas, text that fits an
80-column terminal, one clear message for bad input."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
import yaml

from gpucloud.cli import main


def schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("gpucloud.advisor").joinpath(f"{name}.schema.json").read_text())


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


MIX_RUNS = [
    ["p5.48xlarge", "--nodes", "16", "--months", "18", "--tolerance", "low"],
    ["g6e.12xlarge", "--nodes", "8", "--months", "6", "--tolerance", "high", "--coupling", "independent"],
    ["p5e.48xlarge", "--nodes", "2", "--months", "1", "--tolerance", "none"],
    ["p4d.24xlarge", "--nodes", "4", "--months", "40", "--interruptions-per-month", "30", "--tolerance", "high"],
]
RECOMMEND_RUNS = [
    ["qlora", "--model", "llama-2-7b", "--tokens", "1e8"],
    ["serve", "--model", "llama-3-70b", "--precision", "fp8", "--throughput", "5000"],
    ["pretrain", "--model", "llama-3-70b", "--tokens", "1e12", "--deadline-days", "30"],
    ["full-finetune", "--layers", "32", "--hidden", "4096", "--kv-heads", "8", "--tokens", "1e9"],
    ["serve", "--params", "1000", "--precision", "int4"],
]


@pytest.mark.parametrize("argv", MIX_RUNS)
def test_mix_json_matches_its_schema_and_text_fits_80_columns(capsys: Any, argv: list[str]) -> None:
    code, out, _ = run_cli(capsys, "mix", *argv, "--format", "json")
    assert code == 0
    data = json.loads(out)
    jsonschema.validate(data, schema("mix"))
    code, text, _ = run_cli(capsys, "mix", *argv)
    assert code == 0
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Best: " in text and "Options, expected USD over the job" in text
    assert f"{data['best']['cost']['total_usd']:,.0f}" in text


def test_mix_text_shows_both_checkpoint_intervals_and_the_lost_work(capsys: Any) -> None:
    code, text, _ = run_cli(capsys, "mix", "p5.48xlarge", "--nodes", "8", "--months", "1", "--tolerance", "high")
    data = json.loads(
        run_cli(
            capsys, "mix", "p5.48xlarge", "--nodes", "8", "--months", "1", "--tolerance", "high", "--format", "json"
        )[1]
    )
    cp = data["best"]["checkpoint"]
    assert code == 0 and data["best"]["split"]["spot"] == 8
    assert f"checkpoint every {cp['optimal_minutes']:,.1f} min (exact; Young {cp['young_minutes']:,.1f} min)" in text
    assert f"${data['best']['cost']['lost_work_usd']:,.0f}" in text


def test_mix_yaml_prints_the_fragments_only(capsys: Any) -> None:
    code, out, _ = run_cli(
        capsys, "mix", "p5.48xlarge", "--nodes", "4", "--months", "36", "--tolerance", "none", "--format", "yaml"
    )
    docs = yaml.safe_load(out)
    assert code == 0 and docs["nodePools"][0]["instanceTypes"] == ["p5.48xlarge"]
    assert docs["gpucloud:pricing"]["commitments"][0]["term"] == "3y"


@pytest.mark.parametrize("argv", RECOMMEND_RUNS)
def test_recommend_json_matches_its_schema_and_text_fits_80_columns(capsys: Any, argv: list[str]) -> None:
    code, out, _ = run_cli(capsys, "recommend", *argv, "--format", "json")
    assert code == 0
    data = json.loads(out)
    jsonschema.validate(data, schema("recommend"))
    code, text, _ = run_cli(capsys, "recommend", *argv)
    assert code == 0
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "assumptions:" in text and f"mfu: {data['assumptions']['mfu']}" in text
    if data["candidates"]:
        assert data["candidates"][0]["instance_type"] in text
        assert "First choice: " in text and "memory per accelerator (GiB): " in text


def test_recommend_text_marks_capacity_block_only_types(capsys: Any) -> None:
    code, text, _ = run_cli(
        capsys, "recommend", "serve", "--model", "llama-3.1-405b", "--precision", "fp8", "--concurrency", "8"
    )
    assert code == 0 and "p5e.48xlarge*" in text and "* p5e.48xlarge: Capacity Blocks only" in text


def test_schemas_reject_what_they_document_against() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "gpucloud.mix/v1"}, schema("mix"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "gpucloud.recommend/v2"}, schema("recommend"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["recommend", "pretrain", "--params", "7"], "--tokens is required for training"),
        (["recommend", "serve"], "give the model: --model NAME"),
        (["recommend", "serve", "--params", "-1"], "--params must be a positive number"),
        (["recommend", "serve", "--params", "7", "--top", "0"], "--top must be a whole number of at least 1"),
        (["mix", "p5.48xlarg", "--nodes", "2"], "unknown instance type 'p5.48xlarg'"),
        (["mix", "p5.48xlarge", "--nodes", "0"], "--nodes must be a whole number of at least 1"),
        (["mix", "p5.48xlarge", "--nodes", "2", "--months", "-1"], "--months must be a positive number"),
        (["mix", "m7i.xlarge", "--nodes", "2"], "'m7i.xlarge' is not in the gpucloud catalog"),
    ],
)
def test_cli_bad_input_exit_2(capsys: Any, argv: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err
