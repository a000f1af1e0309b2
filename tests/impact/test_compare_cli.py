"""`gpucloud plan --compare BASE.json` end to end: the same stack planned before and after a change of its stack
file (tests/fixtures/impact_program), as a pull request's base and head would be."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpucloud.cli import main
from gpucloud.impact import semantics
from gpucloud.report import validate_report

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "impact_program"
HEAD_CONFIGS: dict[str, dict[str, Any]] = {
    "instance": {"impact-fleet:instanceType": "p5.48xlarge"},
    "rename": {"impact-fleet:bucket": "impact-datasets-v2-123456789012"},
    "declared": {
        "impact-fleet:bucket": "impact-datasets-v2-123456789012",
        "gpucloud:allowDataReplacement": ["datasets"],
    },
    "topic": {"impact-fleet:topicName": "gpu-alerts"},
    "unchanged": {},
}


def _stack_file(config: dict[str, Any]) -> str:
    return json.dumps({"config": {"aws:region": "us-west-2", **config}})  # JSON is YAML


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the fixture program and its base plan (stack dev, the stack file without changes)."""
    root = tmp_path_factory.mktemp("impact")
    program = root / "program"
    shutil.copytree(FIXTURE, program)
    (program / "Pulumi.dev.yaml").write_text(_stack_file({}))
    base = root / "base.json"
    assert main(_plan(program, "--format", "json", "--out", str(base))) == 0
    return program, base


def _plan(program: Path, *extra: str) -> list[str]:
    return [
        "plan", "--program", str(program), "--stack", "dev", "--no-mix-advice",
        "--policy-config", str(FIXTURE / "policy-config.json"), *extra,
    ]  # fmt: skip


def _compare(project: tuple[Path, Path], change: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    program, base = project
    (program / "Pulumi.dev.yaml").write_text(_stack_file(HEAD_CONFIGS[change]))
    code = main(_plan(program, "--compare", str(base), "--format", fmt))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def _json(project: tuple[Path, Path], change: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out = _compare(project, change, "json", capsys)
    report = json.loads(out)
    validate_report(report)
    return code, report["change_impact"]


def test_unchanged_plan_shows_zero_changes(project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, ci = _json(project, "unchanged", capsys)
    assert code == 0
    assert ci["summary"]["changes"] == 0 and ci["summary"]["unchanged"] == 4  # role, node group, bucket, topic
    assert ci["changes"] == [] and ci["disruption"]["gpu_nodes"] == 0


def test_instance_type_change_is_a_replace_with_drained_gpu_nodes(
    project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, ci = _json(project, "instance", capsys)
    assert code == 0
    [change] = ci["changes"]
    assert (change["name"], change["change"], change["forced_by"]) == ("train", "replace", ["instanceTypes"])
    [pool] = ci["disruption"]["pools"]
    assert (pool["action"], pool["nodes"], pool["gpus_per_node"], pool["gpu_hours_at_risk"]) == ("replaced", 3, 8, 6.0)
    code, text = _compare(project, "instance", "text", capsys)
    flat = " ".join(text.split())
    assert "replace train (aws:eks/nodeGroup:NodeGroup): forced by instanceTypes" in flat
    assert "pool train: replaced, 3 nodes (3 x 8 GPUs), 6 GPU-hours at risk" in flat


def test_bucket_rename_blocks_unless_declared(project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, ci = _json(project, "rename", capsys)
    assert code == 1
    [finding] = ci["data"]
    assert (finding["name"], finding["change"], finding["forced_by"], finding["blocking"]) == (
        "datasets", "replace", ["bucket"], True,
    )  # fmt: skip
    code, md = _compare(project, "rename", "markdown", capsys)
    assert code == 1
    assert "| ❌ blocking | `datasets` | replace | bucket |" in md
    code, ci = _json(project, "declared", capsys)
    assert (code, ci["blocking"], ci["data"][0]["declared"]) == (0, 0, True)


def test_a_topic_display_name_change_is_an_update(
    project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, ci = _json(project, "topic", capsys)
    assert code == 0
    [change] = ci["changes"]
    # Empty lists and a decided change are left out of the JSON.
    assert (change["paths"], change["change"], "forced_by" in change, "undecided" in change) == (
        ["displayName"], "update", False, False,
    )  # fmt: skip


def test_a_type_without_semantics_is_undecided(
    project: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every type of the fixture program has semantics now; take the topic's out to stand for one that has none.
    table = copy.deepcopy(semantics.table())
    del table["types"]["aws:sns/topic:Topic"]
    monkeypatch.setattr(semantics, "table", lambda: table)
    code, ci = _json(project, "topic", capsys)
    assert code == 0
    [change] = ci["changes"]
    assert change["paths"] == ["displayName"]
    assert change["undecided"] == "update or replace: undecided (no replace semantics for aws:sns/topic:Topic)"


def test_a_malformed_allow_list_is_one_clear_error(
    project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    program, base = project
    (program / "Pulumi.dev.yaml").write_text(_stack_file({"gpucloud:allowDataReplacement": {"datasets": True}}))
    code = main(_plan(program, "--compare", str(base)))
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("gpucloud: error: stack dev: gpucloud:allowDataReplacement must be a list of resource URNs")
    assert "Traceback" not in err


def _sarif_impact_run(project: tuple[Path, Path], change: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    import jsonschema

    from gpucloud.report.sarif import load_schema

    _code, out = _compare(project, change, "sarif", capsys)
    sarif = json.loads(out)
    jsonschema.Draft7Validator(load_schema(), format_checker=jsonschema.FormatChecker()).validate(sarif)
    [run] = [r for r in sarif["runs"] if r["tool"]["driver"]["name"] == "gpucloud-change-impact"]
    return run


def test_sarif_blocking_data_finding_is_an_error_result(
    project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run = _sarif_impact_run(project, "rename", capsys)
    [result] = run["results"]
    assert (result["ruleId"], result["level"]) == ("impact/data-replaced", "error")
    assert result["locations"][0]["logicalLocations"][0]["name"] == "datasets"
    assert result["properties"]["forced_by"] == ["bucket"] and result["properties"]["blocking"] is True
    assert run["properties"]["blocking"] == 1
    # Declared in gpucloud:allowDataReplacement: still reported, as a note.
    [declared] = _sarif_impact_run(project, "declared", capsys)["results"]
    assert (declared["ruleId"], declared["level"]) == ("impact/data-replaced", "note")


def test_sarif_replaced_gpu_pool_is_a_warning(project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    run = _sarif_impact_run(project, "instance", capsys)
    [result] = [r for r in run["results"] if r["ruleId"] == "impact/gpu-pool-disrupted"]
    assert result["level"] == "warning"
    assert result["message"]["text"].startswith("pool train: replaced, 3 nodes (3 x 8 GPUs), 6 GPU-hours at risk")
    assert (run["properties"]["gpu_nodes"], run["properties"]["gpu_hours_at_risk"]) == (3, 6.0)
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["impact/data-replaced", "impact/gpu-pool-disrupted", "impact/undecided"]
    assert result["ruleIndex"] == 1


def test_html_page_has_the_change_impact_section(
    project: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _code, page = _compare(project, "rename", "html", capsys)
    section = page[page.index("<h2>Change impact</h2>") :]
    assert '<span class="fail">FAIL</span> Change impact against impact-fleet/dev: 1 change' in section
    assert "<h3>Data replaced or deleted</h3>" in section
    assert "<td>datasets</td><td>replace</td><td>bucket</td>" in section
    _code, page = _compare(project, "unchanged", "html", capsys)
    assert '<span class="pass">PASS</span> Change impact against impact-fleet/dev: 0 changes' in page
