"""--changed BASE: a stack is planned when a changed path is one of its inputs (program, stack file, policy
config, the modules it and the planner import, transitively, their package data), or when a stack it reads is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpucloud.stacks.changed import ChangedError, ImportGraph, affected, git_changed, package_data, stack_inputs
from gpucloud.stacks.discovery import StackInfo, discover

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def repo_stacks() -> list[StackInfo]:
    return discover(ROOT)


@pytest.fixture(scope="module")
def inputs(repo_stacks: list[StackInfo]) -> dict[str, set[str]]:
    return {s.id: stack_inputs(ROOT, s) for s in repo_stacks}


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_import_graph_follows_every_import_form(tmp_path: Path) -> None:
    main = write(tmp_path / "main.py", "import pkg.a\nfrom pkg import b\nimport yaml\n")
    write(tmp_path / "pkg" / "__init__.py")
    write(tmp_path / "pkg" / "a.py", "from .sub import c\n")
    write(tmp_path / "pkg" / "b.py", "def f():\n    from pkg.lazy import x\n    return 'pkg.named'\n")
    write(tmp_path / "pkg" / "sub" / "__init__.py")
    write(tmp_path / "pkg" / "sub" / "c.py", "from ..d import thing\nfrom . import e\n")
    write(tmp_path / "pkg" / "d.py")
    write(tmp_path / "pkg" / "sub" / "e.py")
    write(tmp_path / "pkg" / "lazy.py")
    write(tmp_path / "pkg" / "named.py")
    write(tmp_path / "pkg" / "unused.py")
    write(tmp_path / "pkg" / "broken.py", "this is not python (\n")
    closure = ImportGraph([tmp_path]).closure([main])
    assert {p.relative_to(tmp_path).as_posix() for p in closure} == {
        "main.py",
        "pkg/__init__.py",
        "pkg/a.py",
        "pkg/b.py",
        "pkg/sub/__init__.py",
        "pkg/sub/c.py",
        "pkg/d.py",
        "pkg/sub/e.py",
        "pkg/lazy.py",
        "pkg/named.py",
    }


def test_import_graph_searches_roots_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "program", tmp_path / "repo"
    write(first / "helpers.py")
    write(second / "helpers.py")
    write(second / "lib" / "__init__.py")
    graph = ImportGraph([first, second])
    assert graph.resolve("helpers") == [(first / "helpers.py").resolve()]
    assert graph.resolve("lib.missing") == [(second / "lib" / "__init__.py").resolve()]
    assert graph.resolve("yaml") == []
    assert graph.module_name((second / "lib" / "__init__.py").resolve()) == ("lib", True)
    assert graph.module_name((first / "helpers.py").resolve()) == ("helpers", False)


def test_a_syntax_error_ends_the_walk_there(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.py", "import ok\nthis is not python (\n")
    write(tmp_path / "ok.py")
    assert ImportGraph([tmp_path]).closure([broken]) == {broken.resolve()}


def test_package_data_is_the_non_python_files_beside_package_modules(tmp_path: Path) -> None:
    init = write(tmp_path / "pkg" / "__init__.py")
    module = write(tmp_path / "pkg" / "mod.py")
    schema = write(tmp_path / "pkg" / "schema.json", "{}")
    write(tmp_path / "pkg" / "mod.pyc")
    write(tmp_path / "other" / "data.json", "{}")
    assert package_data([init, module]) == {schema}
    assert package_data([module]) == set()


def test_team_stack_inputs(inputs: dict[str, set[str]]) -> None:
    vision = inputs["gpucloud-team-vision/dev"]
    for path in (
        "stacks/teams/vision/__main__.py",
        "stacks/teams/vision/Pulumi.yaml",
        "stacks/teams/vision/Pulumi.dev.yaml",
        "stacks/teams/vision/requirements.txt",
        "components/team.py",
        "gpucloud/spec/team.py",
        "policies/configs/dev.json",
        # The planner's own modules and data: every plan reads them.
        "gpucloud/plan/engine.py",
        "gpucloud/cost/engine.py",
        "gpucloud/report/plan.schema.json",
        "gpucloud/charts/lock.yaml",
        "policies/gpucloud_policies/cost/spend_cap.py",
        "pyproject.toml",
        "vendor/",
    ):
        assert path in vision, path
    for path in ("stacks/Pulumi.dev.yaml", "components/platform.py", "__main__.py", "README.md", "docs/cost.md"):
        assert path not in vision, path


def test_platform_stack_inputs(inputs: dict[str, set[str]]) -> None:
    prod = inputs["gpucloud/prod"]
    for path in ("__main__.py", "Pulumi.yaml", "stacks/Pulumi.prod.yaml", "components/platform.py"):
        assert path in prod, path
    assert "policies/configs/prod.json" in prod
    for path in ("stacks/Pulumi.dev.yaml", "policies/configs/dev.json", "components/team.py", "tests/conftest.py"):
        assert path not in prod, path


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (["stacks/Pulumi.prod.yaml"], ["gpucloud/prod"]),
        # The team stack reads the dev platform's outputs: a change there can change what it gets.
        (["stacks/Pulumi.dev.yaml"], ["gpucloud/dev", "gpucloud-team-vision/dev"]),
        (["policies/configs/staging.json"], ["gpucloud/staging"]),
        (["components/team.py"], ["gpucloud-team-vision/dev"]),
        # The platform spec reads the team spec's shared models (Kueue queue settings): every stack reads it.
        (["gpucloud/spec/team.py"], ["gpucloud/dev", "gpucloud/prod", "gpucloud/staging", "gpucloud-team-vision/dev"]),
        # The platform program changes the dev platform the team stack reads, so the team stack is planned too.
        (
            ["components/platform.py"],
            ["gpucloud/dev", "gpucloud/prod", "gpucloud/staging", "gpucloud-team-vision/dev"],
        ),
        (["stacks/Pulumi.prod.yaml", "stacks/Pulumi.staging.yaml"], ["gpucloud/prod", "gpucloud/staging"]),
        (
            ["gpucloud/cost/engine.py"],
            ["gpucloud/dev", "gpucloud/prod", "gpucloud/staging", "gpucloud-team-vision/dev"],
        ),
        (
            ["vendor/upstream/charts/x/values.yaml"],
            ["gpucloud/dev", "gpucloud/prod", "gpucloud/staging", "gpucloud-team-vision/dev"],
        ),
        (["README.md", "docs/cost.md", "tests/conftest.py", ""], []),
        ([], []),
    ],
)
def test_affected_stacks(repo_stacks: list[StackInfo], changed: list[str], expected: list[str]) -> None:
    assert [s.id for s in affected(ROOT, repo_stacks, changed)] == expected


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=repo, check=True, capture_output=True
    )


def test_git_changed_lists_committed_uncommitted_and_untracked(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path / "a.txt", "1")
    write(tmp_path / "b.txt", "1")
    write(tmp_path / "ignored.log", "x")
    write(tmp_path / ".gitignore", "*.log\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    git(tmp_path, "tag", "base")
    write(tmp_path / "a.txt", "2")
    git(tmp_path, "commit", "-qam", "change a")
    write(tmp_path / "b.txt", "2")
    write(tmp_path / "new" / "c.txt", "new")
    assert git_changed(tmp_path, "base") == ["a.txt", "b.txt", "new/c.txt"]
    assert git_changed(tmp_path, "HEAD") == ["b.txt", "new/c.txt"]


def test_git_changed_unknown_base_says_how_to_fix(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path / "a.txt")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    with pytest.raises(ChangedError) as err:
        git_changed(tmp_path, "origin/nope")
    message = str(err.value)
    assert message.startswith("--changed origin/nope: git rev-parse --verify failed (")
    assert message.endswith(
        "; give a revision this checkout has, e.g. origin/main (fetch it first: git fetch origin main)"
    )


def test_git_changed_outside_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(ChangedError, match=r"^--changed main: git rev-parse --verify failed \(.*not a git repository"):
        git_changed(tmp_path, "main")
