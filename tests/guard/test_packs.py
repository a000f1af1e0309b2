"""The policy pack plugs into the library: gpucloud never imports `policies`, and the priced plan is an argument."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

import pytest

from gpucloud.guard import evaluate, packs
from gpucloud.plan import run_callable

ROOT = Path(__file__).resolve().parents[2]


def _imports_policies(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        if any(
            n.removeprefix("gpucloud.") == "policies" or n.removeprefix("gpucloud.").startswith("policies.")
            for n in names
        ):
            lines.append(node.lineno)
    return lines


def test_no_gpucloud_module_imports_policies() -> None:
    offenders = {}
    for path in sorted((ROOT / "gpucloud").rglob("*.py")):
        lines = _imports_policies(ast.parse(path.read_text(), str(path)))
        if lines:
            offenders[str(path.relative_to(ROOT))] = lines
    assert offenders == {}


def test_the_scan_sees_every_form_of_import() -> None:
    source = (
        "import policies\nfrom gpucloud.policies.gpucloud_policies import x\n"
        "importlib.import_module('gpucloud.policies.a')\nimport gpucloud.policies\n"
    )
    assert sorted(_imports_policies(ast.parse(source))) == [1, 2, 3, 4]
    assert _imports_policies(ast.parse("from .policies import x\nimport policies_extra\n")) == []


def test_the_pack_is_found_in_its_directory_and_is_the_packs_own_object() -> None:
    from gpucloud.policies.gpucloud_policies import PACK

    assert packs.pack_dir() == ROOT / "policies"
    assert packs.load() is PACK
    assert PACK.PACK_NAME == "gpucloud-guardrails"


def test_the_entry_point_is_declared_for_installed_copies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"][packs.ENTRY_POINT_GROUP]["gpucloud-guardrails"]
    assert target == "gpucloud.policies:gpucloud_pack"
    import gpucloud.policies

    assert gpucloud.policies.gpucloud_pack().PACK_NAME == "gpucloud-guardrails"


def test_a_directory_without_a_pack_says_how_to_plug_one_in(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("GPUCLOUD_POLICY_PACK", str(tmp_path))
    monkeypatch.setattr(packs, "_from_entry_points", lambda: None)
    with pytest.raises(packs.PackNotFoundError, match=r"needs PulumiPolicy\.yaml and an __init__\.py exposing"):
        packs.load()


def test_a_registered_pack_is_the_one_evaluated() -> None:
    from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

    calls: list[Any] = []

    def validate(args: Any, report: Any) -> None:
        report("always")

    class Guardrail:
        name = "always"
        enforcement = EnforcementLevel.MANDATORY

        class severity:
            value = "low"

        @staticmethod
        def defaults() -> dict[str, Any]:
            return {}

    class Pack:
        PACK_NAME = "registered"

        @staticmethod
        def by_name() -> dict[str, Any]:
            return {"always": Guardrail}

        @staticmethod
        def initial_config() -> dict[str, Any]:
            return {}

        @staticmethod
        def policies(cost: Any = None) -> list[Any]:
            calls.append(cost)
            return [ResourceValidationPolicy("always", "d", validate, EnforcementLevel.MANDATORY)]

    import pulumi_aws as aws

    plan = run_callable(lambda: aws.s3.Bucket("b", bucket="b"))
    packs.register(Pack)
    try:
        out = evaluate(plan, cost={"monthly_ceiling": 1.0, "items": []})
    finally:
        packs.unregister(Pack)
    assert [(v["policy"], v["enforcement"]) for v in out.violations] == [("always", "mandatory")]
    # The priced plan reached the pack as an argument.
    assert calls == [{"monthly_ceiling": 1.0, "items": []}]
    assert packs.load() is not Pack


def _pack_dir(tmp_path: Path, name: str, init: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (d / "__init__.py").write_text(init)
    (d / "impl.py").write_text("PACK = object()\nLOADS = []\n")
    return d


def test_a_pack_directory_is_loaded_once_with_its_relative_imports(tmp_path: Path, monkeypatch: Any) -> None:
    import sys

    d = _pack_dir(
        tmp_path,
        "grpc17_pack",
        "from . import impl\nimpl.LOADS.append(1)\ndef gpucloud_pack():\n    return impl.PACK\n",
    )
    monkeypatch.setenv("GPUCLOUD_POLICY_PACK", str(d))
    monkeypatch.setattr(packs, "_from_entry_points", lambda: None)
    private = "_gpucloud_pack_grpc17_pack"
    monkeypatch.delitem(sys.modules, private, raising=False)
    try:
        first = packs.load()
        module = sys.modules[private]
        assert first is module.impl.PACK
        assert packs.load() is first
        assert module.impl.LOADS == [1]
        assert sys.modules[f"{private}.impl"] is module.impl
        # A foreign pack never takes its directory's name as a top-level module (a user's program may own it).
        assert "grpc17_pack" not in sys.modules
    finally:
        sys.modules.pop(f"{private}.impl", None)
        sys.modules.pop(private, None)


def test_a_pack_directory_without_the_hook_is_refused(tmp_path: Path, monkeypatch: Any) -> None:
    import sys

    d = _pack_dir(tmp_path, "grpc17_nohook", "X = 1\n")
    monkeypatch.setenv("GPUCLOUD_POLICY_PACK", str(d))
    monkeypatch.setattr(packs, "_from_entry_points", lambda: None)
    monkeypatch.delitem(sys.modules, "grpc17_nohook", raising=False)
    with pytest.raises(packs.PackNotFoundError, match=r"__init__\.py has no gpucloud_pack\(\)"):
        packs.load()
    (d / "PulumiPolicy.yaml").unlink()
    with pytest.raises(packs.PackNotFoundError, match=r"no policy pack at .*grpc17_nohook"):
        packs.load()


def test_entry_points_come_before_the_directory_and_the_first_by_name_wins(monkeypatch: Any) -> None:
    from importlib import metadata

    class EP:
        def __init__(self, name: str, target: Any) -> None:
            self.name, self.target = name, target

        def load(self) -> Any:
            return self.target

    made = object()
    seen: list[str] = []

    def entry_points(group: str) -> list[EP]:
        seen.append(group)
        return [EP("zz", "late"), EP("aa", lambda: made)]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    assert packs.load() is made
    assert seen == ["gpucloud.policy_packs"]
    monkeypatch.setattr(metadata, "entry_points", lambda group: [EP("only", "plain-object")])
    assert packs.load() == "plain-object"


def test_the_last_registered_pack_wins() -> None:
    first, second = object(), object()
    packs.register(first)
    packs.register(second)
    try:
        assert packs.load() is second
        packs.unregister(second)
        assert packs.load() is first
    finally:
        packs.unregister(first)
        packs.unregister(second)


def test_installed_entry_points_are_scanned_once_per_process(monkeypatch: Any) -> None:
    """Every evaluation looks the pack up; the metadata scan behind it (~70 ms) must not repeat."""
    from importlib import metadata

    calls: list[str] = []

    def entry_points(group: str) -> list[Any]:
        calls.append(group)
        return []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    assert packs._from_entry_points() is None
    assert packs._from_entry_points() is None
    assert calls == ["gpucloud.policy_packs"]
