"""The layers hold: every import between product modules is one the table in scripts/layers.py allows, no import
cycle, no product module over 600 lines, and docs/architecture.md draws the graph the table is checked against."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpucloud_layers", ROOT / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpucloud_layers"] = module
    spec.loader.exec_module(module)
    return module


layers = _load()

# Imports against the layers that another change of issue 23 removes, each with who removes it. The test fails
# when one disappears, so that the entry goes with it.
PENDING: dict[tuple[str, str], str] = {}

# Product modules allowed over MAX_LINES, each with the reason. The test fails when one shrinks under it.
MAX_LINES = 600
LONG_MODULES: dict[str, str] = {}


def test_every_import_between_layers_is_allowed() -> None:
    found = {(a.source, a.target): a for a in layers.violations()}
    unexpected = [
        f"{a.source}:{a.line} imports {a.target} ({a.layers[0]} may not import {a.layers[1]})"
        for key, a in sorted(found.items())
        if key not in PENDING
    ]
    assert unexpected == []
    assert set(found) == set(PENDING), "a pending arrow is gone: remove it from PENDING"


def test_no_import_cycle_between_modules() -> None:
    assert layers.cycles(layers.module_graph()) == []


def test_the_table_is_layered() -> None:
    # Each layer may import only layers listed before it: the table is an order, so it cannot hold a cycle.
    order = list(layers.LAYERS)
    assert {
        layer: sorted(t for t in allowed if order.index(t) >= order.index(layer))
        for layer, allowed in layers.LAYERS.items()
        if any(order.index(t) >= order.index(layer) for t in allowed)
    } == {}
    assert layers.cycles(layers.LAYERS) == []
    assert set(layers.ROLES) == set(layers.LAYERS)


def test_every_product_module_is_in_a_layer() -> None:
    modules = layers.product_modules()
    assert {m: layers.layer_of(m) for m in modules}["gpucloud.components.cluster"] == "gpucloud.components"
    # The symlinked packages are read once, under their import names.
    assert "gpucloud.components.addons.kueue" in modules
    assert "gpucloud.policies.gpucloud_policies.cost.spend_cap" in modules
    assert not any(m.startswith(("components.", "policies.")) for m in modules)


def test_the_fleet_layer_has_its_place() -> None:
    allowed = layers.LAYERS
    assert allowed["gpucloud.fleet"] == layers.FOUNDATION | {"gpucloud.catalog", "gpucloud.spec"}
    readers = [layer for layer, may in allowed.items() if "gpucloud.fleet" in may]
    assert set(readers) >= {
        "gpucloud.cost",
        "gpucloud.conformance",
        "gpucloud.guard",
        "gpucloud.policies",
        "gpucloud.components",
        "gpucloud.advisor",
    }


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"gpucloud/__init__.py": "", "components/__init__.py": "", "policies/__init__.py": ""}.items():
        files.setdefault(rel, text)
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_the_graph_reads_every_form_of_import(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "gpucloud/cost/__init__.py": "",
            "gpucloud/cost/engine.py": "",
            "gpucloud/plan/__init__.py": "",
            "gpucloud/plan/model.py": "",
            "gpucloud/spec/__init__.py": "",
            "gpucloud/spec/base.py": "",
            "gpucloud/spec/pools.py": "from .base import X\n",
            "gpucloud/catalog/__init__.py": "",
            "policies/cap.py": "import importlib\n\ndef f():\n    return importlib.import_module('gpucloud.cost')\n",
            "components/pool.py": (
                "from gpucloud.spec import pools\n\ndef f():\n    from gpucloud.plan.model import Plan\n\n"
                "NAME = 'gpucloud.cost.engine'  # a string, not an import\n"
            ),
        },
    )
    got = {(a.source, a.target) for a in layers.arrows(root)}
    assert got == {
        ("gpucloud.spec.pools", "gpucloud.spec.base"),
        ("gpucloud.policies.cap", "gpucloud.cost"),
        # `from gpucloud.spec import pools` runs gpucloud/spec/__init__.py first: an arrow to the package too.
        ("gpucloud.components.pool", "gpucloud.spec"),
        ("gpucloud.components.pool", "gpucloud.spec.pools"),
        ("gpucloud.components.pool", "gpucloud.plan.model"),
    }
    assert sorted((a.source, a.target) for a in layers.violations(root)) == [
        ("gpucloud.components.pool", "gpucloud.plan.model")
    ]


def test_an_import_under_type_checking_is_an_arrow_but_not_a_cycle(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "components/pool.py": "from gpucloud.components import managed\n",
            "components/managed.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from gpucloud.components.pool import Pool\n"
            ),
        },
    )
    got = {(a.source, a.target, a.type_only) for a in layers.arrows(root)}
    assert got == {
        ("gpucloud.components.pool", "gpucloud.components.managed", False),
        ("gpucloud.components.managed", "gpucloud.components.pool", True),
    }
    assert layers.cycles(layers.module_graph(root)) == []
    (root / "components" / "managed.py").write_text("from gpucloud.components.pool import Pool\n")
    layers.arrows.cache_clear()
    assert layers.cycles(layers.module_graph(root)) == [["gpucloud.components.managed", "gpucloud.components.pool"]]


def test_a_cycle_is_found() -> None:
    assert layers.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layers.cycles({"a": {"b"}, "b": set()}) == []


def test_no_product_module_is_over_600_lines() -> None:
    long = {}
    for path in layers.product_modules().values():
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            long[path.resolve().relative_to(ROOT).as_posix()] = lines
    assert sorted(set(long) - set(LONG_MODULES)) == []
    assert sorted(set(LONG_MODULES) - set(long)) == [], "a listed module is under the limit now: unlist it"


def test_architecture_md_draws_the_checked_graph() -> None:
    text = layers.DOC.read_text()
    assert layers.rendered_doc(text) == text, "regenerate: PYTHONPATH=. python scripts/layers.py --write"


def test_the_diagram_shows_each_layer_and_arrow() -> None:
    drawn = layers.diagram()
    graph = layers.layer_graph()
    for layer, targets in graph.items():
        short = layers._short(layer).replace(".", "_")
        assert f'{short}["{layers._short(layer)}' in drawn
        for target in targets - {layers.BASE}:
            arrow = "-->" if target in layers.LAYERS[layer] else "-.->|not allowed|"
            assert f"  {short} {arrow} {layers._short(target).replace('.', '_')}" in drawn
    assert "  components --> conformance" not in drawn
    assert "  components --> plan" not in drawn
    assert "-.->|not allowed|" not in drawn  # no arrow against the layers is left
    assert "  components -.->|not allowed| cost" not in drawn
    assert 'fleet["fleet (no modules yet)"]' in drawn or "gpucloud.fleet" in {
        layers.layer_of(m) for m in layers.product_modules()
    }


def test_script_exits_1_on_a_violation_and_0_when_clean(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"gpucloud/spec/__init__.py": "", "gpucloud/catalog/__init__.py": "import gpucloud.spec\n"})
    assert [(a.source, a.target) for a in layers.violations(root)] == [("gpucloud.catalog", "gpucloud.spec")]
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "layers.py")], capture_output=True, text=True, cwd=ROOT
    )
    pending = len(PENDING)
    assert result.returncode == (1 if pending else 0)
    assert result.stdout.count("may not import") == pending


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("gpucloud.components.addons.kueue", ("gpucloud.conformance", "gpucloud.plan", "gpucloud.report")),
        ("gpucloud.components.network", ("gpucloud.conformance", "gpucloud.plan", "gpucloud.cost")),
        ("gpucloud.prices.refresh", ("gpucloud.preflight", "gpucloud.cost")),
        ("gpucloud.spec", ("gpucloud.plan", "gpucloud.components", "gpucloud.conformance")),
    ],
)
def test_importing_a_module_loads_only_the_layers_below(module: str, absent: tuple[str, ...]) -> None:
    code = (
        f"import json, sys, {module}\n"
        "print(json.dumps(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules if m.startswith('gpucloud.')})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert [layer for layer in loaded if layer in absent] == []
