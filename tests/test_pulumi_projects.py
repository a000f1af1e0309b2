"""The files the Pulumi CLI reads, checked against what it reads them as: every Pulumi.yaml against the project
schema and the python runtime's options, the virtualenv Pulumi creates and what it installs there, and team stack
references that are valid on a DIY backend (org `organization`) and on Pulumi Cloud (any org)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

from gpucloud.plan.engine import OFFLINE_STACK_REFERENCES_KEY, Project, stack_reference_outputs
from gpucloud.spec.team import parse_team
from gpucloud.stacks.discovery import discover, find_projects

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "pulumi" / "project.schema.json").read_text())
PROJECTS = find_projects(ROOT)
DIY_ORG = "organization"


def test_the_repository_has_the_root_and_team_projects() -> None:
    assert PROJECTS == [ROOT, ROOT / "stacks" / "teams" / "vision"]


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)) or ".")
def test_project_file_is_what_the_cli_reads(project: Path) -> None:
    data = yaml.safe_load((project / "Pulumi.yaml").read_text())
    jsonschema.validate(data, SCHEMA)
    runtime = data["runtime"]
    assert runtime["name"] == "python"
    jsonschema.validate(runtime.get("options") or {}, SCHEMA["$defs"]["pythonOptions"])


def venv_of(project: Path) -> Path:
    options = yaml.safe_load((project / "Pulumi.yaml").read_text())["runtime"]["options"]
    assert options["toolchain"] == "pip"
    # pip toolchain: the virtualenv option is relative to the project root (resolveVirtualEnvironmentPath).
    return (project / options["virtualenv"]).resolve()


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)) or ".")
def test_pulumi_and_make_share_one_venv(project: Path) -> None:
    makefile = (ROOT / "Makefile").read_text()
    venv = re.search(r"^VENV\s*\?=\s*(\S+)", makefile, re.M)
    assert venv is not None
    assert venv_of(project) == (ROOT / venv.group(1)).resolve()


def requirement_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)) or ".")
def test_the_venv_pulumi_creates_installs_gpucloud(project: Path) -> None:
    # When the venv is missing, the pip toolchain creates it and runs `pip install -r requirements.txt` in the
    # program directory (InstallDependencies, cwd = the project): without that file the venv stays empty.
    requirements = project / "requirements.txt"
    assert requirements.is_file()
    lines = requirement_lines(requirements)
    editable = [line.split(None, 1)[1] for line in lines if line.startswith("-e ")]
    constraints = [line.split(None, 1)[1] for line in lines if line.startswith("-c ")]
    assert len(editable) == 1 and len(constraints) == 1, lines
    # pip resolves an editable path against its working directory, a nested -c against the requirements file.
    source = (project / editable[0]).resolve()
    assert tomllib.loads((source / "pyproject.toml").read_text())["project"]["name"] == "gpucloud"
    assert (requirements.parent / constraints[0]).resolve() == ROOT / "constraints.txt"


def team_stacks() -> list[tuple[Path, str]]:
    return [(ROOT / s.program, s.stack) for s in discover(ROOT) if s.program != "."]


@pytest.mark.parametrize(("program", "stack"), team_stacks(), ids=lambda v: str(v))
@pytest.mark.parametrize("org", [DIY_ORG, "acme"])
def test_team_references_resolve_on_every_backend(program: Path, stack: str, org: str) -> None:
    config = Project(program).config(stack)
    team = parse_team(config["gpucloud:team"], stack, config.get("aws:region"))
    reference = team.platform_reference(org)
    reference_org, project, platform = reference.split("/")
    # The backend the team stack runs in decides the org: a DIY backend only has `organization`.
    assert reference_org == org
    platform_ids = {s.id for s in discover(ROOT) if s.program == "."}
    assert f"{project}/{platform}" in platform_ids
    assert stack_reference_outputs(config[OFFLINE_STACK_REFERENCES_KEY], reference) is not None
