"""The shipped repository as a new user meets it: `gpucloud plan` with no flags passes on dev, each stack is
judged by its own policy config (prod as prod), and `plan --all` plans every stack, the team stack included."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpucloud.cli import main
from gpucloud.report import validate_combined

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    out = tmp_path_factory.mktemp("all") / "all.json"
    before = os.getcwd()
    os.chdir(ROOT)
    try:
        code = main(["plan", "--all", "--format", "json", "--out", str(out)])
    finally:
        os.chdir(before)
    combined = json.loads(out.read_text())
    assert code == combined["exit_code"]
    yield combined


def test_plan_all_covers_every_stack_with_its_own_config(everything: dict) -> None:
    validate_combined(everything)
    assert everything["exit_code"] == 0
    assert [(s["id"], s["policy_config"], s["exit_code"]) for s in everything["stacks"]] == [
        ("gpucloud/dev", "policies/configs/dev.json", 0),
        ("gpucloud/prod", "policies/configs/prod.json", 0),
        ("gpucloud/staging", "policies/configs/staging.json", 0),
        ("gpucloud-team-vision/dev", "policies/configs/dev.json", 0),
    ]
    team = everything["stacks"][3]["report"]
    assert team["project"] == "gpucloud-team-vision"
    assert any(r["type"] == "kubernetes:core/v1:Namespace" for r in team["resources"])


def test_prod_is_not_judged_as_a_non_prod_environment(everything: dict) -> None:
    prod = everything["stacks"][1]["report"]
    policies = {v["policy"] for v in prod["policies"]["violations"]}
    # Without prod's config the pack's defaults apply, and these two call prod "a non-prod environment".
    assert not policies & {"nonprod-spot-share", "scale-to-zero"}
    assert all("non-prod" not in v["message"] for v in prod["policies"]["violations"])


def test_plan_with_no_flags_passes_on_dev(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["plan", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert (report["stack"], report["policy_config"]) == ("dev", "policies/configs/dev.json")
    # dev.json makes data-retain-on-delete advisory; without it that guardrail is mandatory and failed the plan.
    retain = [v for v in report["policies"]["violations"] if v["policy"] == "data-retain-on-delete"]
    assert retain and {v["enforcement"] for v in retain} == {"advisory"}


def test_plan_all_reports_the_same_with_and_without_the_pool(everything: dict, tmp_path: Path) -> None:
    from gpucloud.cli.plan_all import default_jobs, usable_cores

    # The fixture ran with the default jobs; run the other way (one process or a pool) and compare every stack's
    # report, byte for byte but the timings.
    other = "2" if default_jobs(usable_cores()) == 1 else "1"
    out = tmp_path / "other.json"
    before = os.getcwd()
    os.chdir(ROOT)
    try:
        main(["plan", "--all", "--jobs", other, "--format", "json", "--out", str(out)])
    finally:
        os.chdir(before)

    def strip(doc: dict) -> list:
        return [{k: v for k, v in s.items() if k != "seconds"} for s in doc["stacks"]]

    again = json.loads(out.read_text())
    assert [s["id"] for s in again["stacks"]] == [s["id"] for s in everything["stacks"]]
    assert strip(again) == strip(everything)
    assert again["summary"] == everything["summary"]
