"""`gpucloud new team NAME`: a team stack project that plans clean as written (gpucloud/templates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gpucloud.cli import main
from gpucloud.templates import render, write_team

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    ".github/workflows/gpucloud.yml",
    ".gitignore",
    "Pulumi.dev.yaml",
    "Pulumi.yaml",
    "README.md",
    "__main__.py",
    "requirements.txt",
]


def _listing(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())


def test_new_team_writes_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "ml-research"
    assert main(["new", "team", "ml-research", "--dir", str(dest)]) == 0
    assert _listing(dest) == FILES
    assert sorted(capsys.readouterr().out.split()) == sorted(str(dest / f) for f in FILES)
    project = yaml.safe_load((dest / "Pulumi.yaml").read_text())
    assert project["name"] == "gpucloud-team-ml-research"
    assert project["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": ".venv"}}
    assert [line for line in (dest / "requirements.txt").read_text().splitlines() if not line.startswith("#")] == [
        "gpucloud==0.2.0"
    ]
    team = yaml.safe_load((dest / "Pulumi.dev.yaml").read_text())["config"]["gpucloud:team"]
    assert (team["name"], team["environment"], team["platformStack"]) == ("ml-research", "dev", "gpucloud/dev")
    assert "@" not in (dest / "__main__.py").read_text().replace("@example.com", "")


def test_the_ci_workflow_plans_and_runs_the_installed_pack(tmp_path: Path) -> None:
    write_team(tmp_path / "t", "vision2", "staging")
    workflow = yaml.safe_load((tmp_path / "t" / ".github" / "workflows" / "gpucloud.yml").read_text())
    plan_steps = " ".join(str(s.get("run", "")) for s in workflow["jobs"]["plan"]["steps"])
    assert ".venv/bin/pip install -r requirements.txt" in plan_steps
    assert ".venv/bin/gpucloud plan --stack staging" in plan_steps
    preview = workflow["jobs"]["preview"]
    assert "gpucloud pack path" in " ".join(str(s.get("run", "")) for s in preview["steps"])
    action = next(s for s in preview["steps"] if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert action["with"]["policyPacks"] == "${{ env.PACK }}"
    assert action["with"]["stack-name"].endswith("/gpucloud-team-vision2/staging")


@pytest.mark.parametrize("environment", ["dev", "staging", "prod"])
def test_the_project_plans_clean_as_written(
    environment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "team"
    write_team(dest, "ml", environment)
    monkeypatch.chdir(dest)
    code = main(["plan", "--stack", environment, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    # Clean: no violation of any level, nothing undecided, no conformance finding.
    assert (report["policies"]["violations"], report["policies"]["not_evaluated"]) == ([], [])
    assert (report["policies"]["undecided"], report["conformance"]["findings"]) == ([], [])
    assert (report["conformance"]["errors"], report["conformance"]["warnings"]) == (0, 0)
    # Outside any repository the stack is judged by the config shipped for its environment.
    assert report["policy_config"] == str(ROOT / "gpucloud" / "policies" / "configs" / f"{environment}.json")


def test_the_program_is_the_vision_team_program() -> None:
    # One team program: the template's is stacks/teams/vision's, less the checkout's sys.path fallback.
    template = render("team", name="x", environment="dev")["__main__.py"]
    vision = (ROOT / "stacks" / "teams" / "vision" / "__main__.py").read_text()
    assert template.split("\nimport pulumi\n", 1)[1] == vision.split("\nimport pulumi\n", 1)[1]


def test_a_directory_with_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README.md").write_text("mine")
    assert main(["new", "team", "ml", "--dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"gpucloud: error: {tmp_path} is not empty: choose a new or empty directory with --dir (nothing was written)\n"
    )
    assert _listing(tmp_path) == ["README.md"]


def test_an_empty_directory_is_used(tmp_path: Path) -> None:
    assert main(["new", "team", "ml", "--dir", str(tmp_path)]) == 0
    assert _listing(tmp_path) == FILES


@pytest.mark.parametrize("name", ["ML", "ml-", "ml_team", "a" * 41, ""])
def test_a_bad_team_name_is_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "team", name]) == 2
    assert capsys.readouterr().err == (
        f"gpucloud: error: team name {name!r} is not a lowercase DNS label of at most 40 characters "
        "(a-z, 0-9 and '-', starting and ending with a letter or digit), e.g. vision\n"
    )
    assert list(tmp_path.iterdir()) == []
