"""Stack discovery: projects and stack files found, references resolved across orgs, dependency order, policy
configs chosen by stack name, then spec environment."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpucloud.plan.engine import PlanInputError
from gpucloud.stacks.discovery import (
    StackDiscoveryError,
    StackInfo,
    discover,
    find_projects,
    link,
    order,
    policy_config_for,
    references_of,
    spec_of,
    split_reference,
)

ROOT = Path(__file__).resolve().parents[2]


def write_project(directory: Path, name: str, stacks: dict[str, dict], stack_dir: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    project = {"name": name, "runtime": "python"}
    if stack_dir:
        project["stackConfigDir"] = stack_dir
    (directory / "Pulumi.yaml").write_text(yaml.safe_dump(project))
    (directory / "__main__.py").write_text("")
    target = directory / (stack_dir or ".")
    target.mkdir(parents=True, exist_ok=True)
    for stack, config in stacks.items():
        (target / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return directory


def info(project: str, stack: str, program: str = ".", refs: tuple[str, ...] = ()) -> StackInfo:
    return StackInfo(project, stack, program, f"{program}/Pulumi.{stack}.yaml", None, refs)


def test_the_repository_stacks_in_dependency_order() -> None:
    stacks = discover(ROOT)
    assert [s.id for s in stacks] == ["gpucloud/dev", "gpucloud/prod", "gpucloud/staging", "gpucloud-team-vision/dev"]
    vision = stacks[-1]
    assert vision.program == "stacks/teams/vision"
    assert vision.stack_file == "stacks/teams/vision/Pulumi.dev.yaml"
    assert vision.environment == "dev"
    assert vision.references == ("gpucloud/dev",)
    assert vision.depends_on == ("gpucloud/dev",)
    assert [s.stack_file for s in stacks[:3]] == [f"stacks/Pulumi.{e}.yaml" for e in ("dev", "prod", "staging")]
    assert [s.environment for s in stacks[:3]] == ["dev", "prod", "staging"]
    assert stacks[0].to_json() == {
        "id": "gpucloud/dev",
        "project": "gpucloud",
        "stack": "dev",
        "program": ".",
        "stack_file": "stacks/Pulumi.dev.yaml",
        "environment": "dev",
        "references": [],
        "depends_on": [],
    }


def test_team_stacks_depend_on_their_platform_in_any_org(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        "plat",
        {"dev": {"gpucloud:platform": {"environment": 3}}, "prod": {"gpucloud:platform": {"environment": "prod"}}},
        "stacks",
    )
    write_project(
        tmp_path / "teams" / "a",
        "team-a",
        {"dev": {"gpucloud:team": {"environment": "prod", "platformStack": "acme/plat/prod"}}},
    )
    write_project(
        tmp_path / "teams" / "b",
        "team-b",
        {"dev": {"gpucloud:offlineStackReferences": {"plat/dev": {}, "other/x": {}, "team-a/dev": {}}}},
    )
    stacks = discover(tmp_path)
    by_id = {s.id: s for s in stacks}
    assert [s.id for s in stacks] == ["plat/dev", "plat/prod", "team-a/dev", "team-b/dev"]
    assert by_id["team-a/dev"].depends_on == ("plat/prod",)
    assert by_id["team-a/dev"].environment == "prod"
    assert by_id["plat/prod"].environment == "prod"
    assert by_id["plat/dev"].environment is None  # not a name: the spec check reports it when the stack is planned
    assert by_id["plat/prod"].stack_file == "stacks/Pulumi.prod.yaml"
    assert by_id["team-a/dev"].stack_file == "teams/a/Pulumi.dev.yaml"
    assert by_id["team-a/dev"].program == "teams/a"
    # An external reference (other/x) is listed but is no dependency.
    assert by_id["team-b/dev"].references == ("plat/dev", "other/x", "team-a/dev")
    assert by_id["team-b/dev"].depends_on == ("plat/dev", "team-a/dev")


def test_dependencies_come_first_whatever_the_names() -> None:
    # "a-team" sorts before "z-plat" by name, but reads it: it must come after.
    stacks = link([info("a-team", "dev", "a", ("org/z-plat/dev",)), info("z-plat", "dev", "z")])
    assert [s.id for s in order(stacks)] == ["z-plat/dev", "a-team/dev"]


def test_ties_are_ordered_by_program_then_stack() -> None:
    stacks = [info("p", "b", "y"), info("q", "a", "y"), info("r", "c", "x")]
    assert [s.id for s in order(stacks)] == ["r/c", "q/a", "p/b"]


def test_a_reference_cycle_is_an_error_naming_the_stacks() -> None:
    stacks = link([info("a", "dev", "a", ("b/dev",)), info("b", "dev", "b", ("a/dev",)), info("c", "dev", "c")])
    with pytest.raises(StackDiscoveryError) as err:
        order(stacks)
    assert str(err.value).startswith("stack references form a cycle among a/dev, b/dev: ")
    assert isinstance(err.value, PlanInputError)


def test_a_stack_referencing_itself_is_not_its_own_dependency() -> None:
    (s,) = link([info("a", "dev", "a", ("dev", "a/dev", "org/a/dev"))])
    assert s.depends_on == ()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("dev", ("own", "dev")), ("plat/dev", ("plat", "dev")), ("acme/plat/dev", ("plat", "dev"))],
)
def test_split_reference(name: str, expected: tuple[str, str]) -> None:
    assert split_reference(name, "own") == expected


def test_skipped_directories_hold_no_stacks(tmp_path: Path) -> None:
    write_project(tmp_path, "root", {"dev": {}})
    for skipped in ("tests/fixtures/x", "vendor/y", ".hidden/z", "node_modules/w"):
        write_project(tmp_path / skipped, "skipped", {"dev": {}})
    venv = tmp_path / "env"
    write_project(venv / "lib" / "pkg", "in-venv", {"dev": {}})
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    write_project(tmp_path / "svc" / "api", "api", {"prod": {}})
    (tmp_path / "yml").mkdir()
    (tmp_path / "yml" / "Pulumi.yml").write_text("name: yml\nruntime: python\n")
    (tmp_path / "yml" / "__main__.py").write_text("")
    assert find_projects(tmp_path) == [tmp_path, tmp_path / "svc" / "api", tmp_path / "yml"]
    assert [s.id for s in discover(tmp_path)] == ["root/dev", "api/prod"]


def test_a_broken_project_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\n")
    with pytest.raises(PlanInputError, match="runtime: missing"):
        discover(tmp_path)


def test_spec_and_references_read_from_config() -> None:
    assert spec_of({"gpucloud:platform": {"environment": "prod"}}) == {"environment": "prod"}
    assert spec_of({"gpucloud:team": {"environment": "dev"}}) == {"environment": "dev"}
    assert spec_of({"gpucloud:platform": "not a mapping"}) == {}
    assert spec_of({}) == {}
    assert references_of({"gpucloud:team": {"platformStack": 3}}) == ()
    assert references_of(
        {"gpucloud:team": {"platformStack": "p/dev"}, "gpucloud:offlineStackReferences": {"p/dev": {}, "q/x": {}}}
    ) == ("p/dev", "q/x")
    assert references_of({"gpucloud:offlineStackReferences": ["p/dev"]}) == ()


def test_policy_config_by_stack_name_then_environment(tmp_path: Path) -> None:
    configs = tmp_path / "policies" / "configs"
    configs.mkdir(parents=True)
    for name in ("dev", "prod", "qa"):
        (configs / f"{name}.json").write_text("{}")
    program = tmp_path / "stacks" / "teams" / "t"
    program.mkdir(parents=True)
    assert policy_config_for(program, "qa", "prod") == configs / "qa.json"
    # A stack named after no config file is judged by its spec's environment (prod-eu is a prod stack).
    assert policy_config_for(program, "prod-eu", "prod") == configs / "prod.json"
    assert policy_config_for(program, "prod-eu", None, shipped=tmp_path / "none") is None
    assert policy_config_for(program, "prod-eu", "staging", shipped=tmp_path / "none") is None


def test_policy_config_falls_back_to_the_configs_shipped_with_gpucloud(tmp_path: Path) -> None:
    from gpucloud import package_data

    program = tmp_path / "team"
    (program / "policies" / "configs").mkdir(parents=True)
    (program / "policies" / "configs" / "dev.json").write_text("{}")
    # The team's own file overrides; an environment it has no file for is judged by the shipped config.
    assert policy_config_for(program, "dev", "dev", cwd=program) == program / "policies" / "configs" / "dev.json"
    assert policy_config_for(program, "prod-eu", "prod", cwd=program) == package_data.POLICY_CONFIGS / "prod.json"
    assert policy_config_for(tmp_path / "bare", "x", "staging", cwd=tmp_path) == (
        package_data.POLICY_CONFIGS / "staging.json"
    )
    assert policy_config_for(tmp_path / "bare", "x", "qa", cwd=tmp_path) is None
    # A stack name alone never picks a shipped config: those are per environment.
    assert policy_config_for(tmp_path / "bare", "prod", None, cwd=tmp_path) is None


def test_policy_config_found_under_the_working_directory(tmp_path: Path) -> None:
    program = tmp_path / "elsewhere"
    program.mkdir()
    cwd = tmp_path / "repo"
    (cwd / "policies" / "configs").mkdir(parents=True)
    (cwd / "policies" / "configs" / "dev.json").write_text("{}")
    assert policy_config_for(program, "dev", None, cwd=cwd) == cwd / "policies" / "configs" / "dev.json"
    assert policy_config_for(program, "dev", None, cwd=program, shipped=tmp_path / "none") is None


def test_the_nearest_policy_configs_win(tmp_path: Path) -> None:
    for base in (tmp_path, tmp_path / "team"):
        (base / "policies" / "configs").mkdir(parents=True)
        (base / "policies" / "configs" / "dev.json").write_text("{}")
    assert policy_config_for(tmp_path / "team", "dev", None) == tmp_path / "team" / "policies" / "configs" / "dev.json"
