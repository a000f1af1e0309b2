"""`gpucloud plan` on programs that print, log and exit: stdout stays the report, bad programs exit 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gpucloud.cli import main
from gpucloud.report import validate_report

PREVIEW = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "preview"


def advisory(tmp_path: Path) -> str:
    # Guardrail verdicts are not what these tests are about: every policy advisory, so the exit code is the plan's.
    path = tmp_path / "policy.json"
    path.write_text('{"all": "advisory"}')
    return str(path)


def test_json_stdout_is_the_report_when_the_program_prints(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = str(PREVIEW / "printing")
    code = main(
        ["plan", "--program", program, "--stack", "dev", "--format", "json", "--policy-config", advisory(tmp_path)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    validate_report(report)
    suffix = hashlib.sha256(b"urn:pulumi:dev::printing::aws:s3/bucket:Bucket::logs").hexdigest()[:7]
    # Derived from the bucket's name (see gpucloud.plan.engine.derived_outputs).
    assert report["outputs"] == {"bucketName": f"logs-{suffix}", "bucketArn": f"arn:aws:s3:::logs-{suffix}"}
    assert "hello from the program\n" in err


def test_log_messages_in_the_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = str(PREVIEW / "logging")
    code = main(
        ["plan", "--program", program, "--stack", "dev", "--format", "json", "--policy-config", advisory(tmp_path)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    validate_report(report)
    assert [(e["severity"], e["message"]) for e in report["log"]] == [
        ("info", "sizing the fleet for 8 GPUs"),
        ("warning", "no budget alarm configured"),
    ]


def test_sys_exit_exits_2_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--program", str(PREVIEW / "exiting"), "--stack", "dev", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "program called sys.exit(3) in __main__.py:6" in err
    assert "Traceback" not in err
