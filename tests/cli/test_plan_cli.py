"""`gpucloud plan` end to end: formats, exit codes, bad input without tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpucloud.cli import main
from gpucloud.report import validate_report

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "fixtures" / "raw_program"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_dev_text_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys,
        "plan",
        "--program",
        str(ROOT),
        "--stack",
        "dev",
        "--policy-config",
        str(ROOT / "policies/configs/dev.json"),
    )
    assert code == 0, err
    assert out.startswith("gpucloud plan  project gpucloud  stack dev  ")
    assert "Resources by type" in out
    assert "Guardrails (gpucloud-guardrails): PASS" in out
    assert "Cost: $" in out


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_json_plan_matches_contract(capsys: pytest.CaptureFixture[str], stack: str) -> None:
    code, out, err = run_cli(
        capsys,
        "plan",
        "--program",
        str(ROOT),
        "--stack",
        stack,
        "--format",
        "json",
        "--policy-config",
        str(ROOT / f"policies/configs/{stack}.json"),
    )
    assert code == 0, err
    report = json.loads(out)
    validate_report(report)
    assert (report["schema"], report["project"], report["stack"]) == ("gpucloud.plan/v1", "gpucloud", stack)
    types = {r["type"] for r in report["resources"]}
    assert {
        "gpucloud:budget:GpuBudget",
        "gpucloud:cluster:GpuCluster",
        "gpucloud:nodepool:GpuNodePool",
        "aws:eks/cluster:Cluster",
        "aws:eks/nodeGroup:NodeGroup",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
    } <= types
    assert report["policies"]["mandatory_violations"] == 0
    assert report["cost"]["monthly_ceiling"] >= report["cost"]["monthly"] > 0


def test_any_program_dir(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "plan", "--program", str(RAW), "--stack", "test", "--format", "json")
    assert code == 0
    report = json.loads(out)
    validate_report(report)
    assert report["project"] == "raw-gpu-fleet"
    assert sorted(r["name"] for r in report["resources"]) == ["node-role", "train", "train-lt", "train-pg"]


def test_markdown_and_out_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    code, out, _ = run_cli(
        capsys, "plan", "--program", str(RAW), "--stack", "test", "--format", "markdown", "--out", str(target)
    )
    assert code == 0
    assert out == ""
    text = target.read_text()
    assert text.startswith("### gpucloud plan: `raw-gpu-fleet` / `test`\n")
    assert "| `aws:eks/nodeGroup:NodeGroup` | 1 |" in text


def _bad_stack_project(tmp_path: Path, mutate: dict[str, object]) -> Path:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    doc["config"]["gpucloud:platform"].update(mutate)
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "Pulumi.yaml").write_text(
        yaml.safe_dump(
            {"name": "gpucloud", "runtime": "python", "stackConfigDir": "stacks", "main": str(ROOT / "__main__.py")}
        )
    )
    return tmp_path


def test_bad_spec_exit_2_with_paths(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    project = _bad_stack_project(tmp_path, {"region": "moon-1", "color": "red"})
    code, out, err = run_cli(capsys, "plan", "--program", str(project))
    assert code == 2
    assert out == ""
    # The stack file is named, so the user knows which file to open.
    assert err.startswith(f"gpucloud: error: invalid stack 'dev' ({project}/stacks/Pulumi.dev.yaml): 2 problems\n")
    assert "  - gpucloud:platform.region: unknown AWS region 'moon-1'" in err
    assert "  - gpucloud:platform.color: unknown key 'color'; allowed keys: addons, availabilityZones, budget" in err


def test_unknown_stack_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "plan", "--program", str(ROOT), "--stack", "qa")
    assert code == 2
    assert "unknown stack 'qa' for project 'gpucloud'" in err
    assert "(available stacks: dev, prod, staging)" in err


def test_program_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "plan", "--program", str(ROOT / "tests/fixtures/raising_program"))
    assert code == 2
    assert err == "gpucloud: error: program error in __main__.py:7: KeyError: 'xl'\n"


def test_bad_compare_and_policy_config_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bogus = tmp_path / "base.json"
    bogus.write_text('{"schema": "something-else"}')
    code, _, err = run_cli(capsys, "plan", "--program", str(RAW), "--stack", "test", "--compare", str(bogus))
    assert code == 2
    assert "is not a gpucloud plan JSON" in err
    code, _, err = run_cli(
        capsys, "plan", "--program", str(RAW), "--stack", "test", "--policy-config", str(tmp_path / "missing.json")
    )
    assert code == 2
    assert "--policy-config file" in err and "does not exist" in err


def test_usage_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "plan", "--format", "yaml")
    assert code == 2
    assert "invalid choice: 'yaml'" in err


def test_console_script_no_traceback(tmp_path: Path) -> None:
    project = _bad_stack_project(tmp_path, {"nodePools": []})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "gpucloud.cli", "plan", "--program", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "gpucloud:platform.nodePools: List should have at least 1 item" in proc.stderr


def test_module_entry_writes_the_whole_plan_before_its_fast_exit(tmp_path: Path) -> None:
    # entry() leaves with os._exit after flushing; the JSON on stdout must be complete and the exit code kept.
    # Buffered stdout (no PYTHONUNBUFFERED), as in a pipeline, is where a missing flush would lose it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "gpucloud.cli", "plan", "--program", str(RAW), "--stack", "test", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    validate_report(report)
    assert (report["project"], report["stack"], len(report["resources"])) == ("raw-gpu-fleet", "test", 4)


def test_main_restores_the_collector_thresholds(capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    before = gc.get_threshold()
    code, _, _ = run_cli(capsys, "plan", "--program", str(RAW), "--stack", "nope")
    assert code == 2
    assert gc.get_threshold() == before


def test_help_and_light_commands_do_not_import_the_plan_engine() -> None:
    probe = (
        "import sys\n"
        "from gpucloud.cli import main\n"
        "assert main(['prices', 'show', '--format', 'json']) == 0\n"
        "heavy = sorted(m for m in ('pulumi', 'pulumi_aws', 'gpucloud.plan', 'botocore.session', 'rich') "
        "if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUCLOUD_PRICE_CACHE": "off"}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY []"
