"""The layers of gpucloud: which package may import which, checked against the import graph of every product module.

The graph is read from the source (ast), never from a hand-written list: `import a.b`, `from a import b`, relative
imports, imports inside functions, imports under TYPE_CHECKING (an arrow for the layers, but not for cycles: it
never runs), and modules loaded by name through `importlib.import_module("...")` / `importlib.util.find_spec("...")`
(an arrow hidden behind importlib is still an arrow). Product modules are the files under gpucloud/, components/
and policies/; the last two are imported as `gpucloud.components...` and `gpucloud.policies...`
(gpucloud/components and gpucloud/policies are symlinks).

`tests/layers` checks the graph against LAYERS (and that it has no cycle), and that the diagram in
docs/architecture.md is the one `diagram()` draws from the same graph. After changing the layers, regenerate it:

    PYTHONPATH=. python scripts/layers.py --write     # rewrites the diagram block of docs/architecture.md
    PYTHONPATH=. python scripts/layers.py             # prints violations and cycles; exit 1 when there are any
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Directory on disk -> the dotted prefix its modules are imported under.
PRODUCT_DIRS = {"gpucloud": "gpucloud", "components": "gpucloud.components", "policies": "gpucloud.policies"}

# The layers, lowest first, each with the layers it may import (its own modules aside). A layer is a package of
# gpucloud (or one top-level module); a module belongs to the longest layer name that prefixes it. The order is
# the diagram's too. `gpucloud.fleet` is the pure model of a plan's pools (issue 23 item 1): above the facts it
# reads (catalog, spec), below every reader of it.
BASE = "gpucloud"  # gpucloud/__init__.py: the version string, importable from anywhere
# What any layer may use: the version, atomic file writes (gpucloud.fileio) and where package data lives.
FOUNDATION = frozenset({BASE, "gpucloud.fileio", "gpucloud.package_data"})
LAYERS: dict[str, frozenset[str]] = {
    BASE: frozenset(),
    "gpucloud.fileio": frozenset({BASE}),
    "gpucloud.package_data": frozenset({BASE}),
    "gpucloud.surface": frozenset({BASE}),
    "gpucloud.catalog": FOUNDATION,
    "gpucloud.tools": FOUNDATION,
    "gpucloud.charts": FOUNDATION | frozenset({"gpucloud.tools"}),
    "gpucloud.filecache": FOUNDATION,
    "gpucloud.aws": FOUNDATION | frozenset({"gpucloud.catalog"}),
    "gpucloud.versions": FOUNDATION | frozenset({"gpucloud.aws"}),
    "gpucloud.spec": FOUNDATION | frozenset({"gpucloud.catalog", "gpucloud.charts", "gpucloud.versions"}),
    "gpucloud.fleet": FOUNDATION | frozenset({"gpucloud.catalog", "gpucloud.spec"}),
    "gpucloud.prices": FOUNDATION
    | frozenset({"gpucloud.catalog", "gpucloud.aws", "gpucloud.filecache", "gpucloud.versions"}),
    # filecache: the lazy SDK loader keeps its package and type-module indexes there between processes.
    "gpucloud.plan": FOUNDATION
    | frozenset({"gpucloud.catalog", "gpucloud.charts", "gpucloud.filecache", "gpucloud.spec", "gpucloud.tools"}),
    "gpucloud.components": FOUNDATION
    | frozenset(
        {
            "gpucloud.catalog",
            "gpucloud.charts",
            "gpucloud.filecache",
            "gpucloud.spec",
            "gpucloud.fleet",
            "gpucloud.prices",
            "gpucloud.versions",
        }
    ),
    "gpucloud.advisor": FOUNDATION
    | frozenset({"gpucloud.catalog", "gpucloud.spec", "gpucloud.prices", "gpucloud.fleet"}),
    "gpucloud.cost": FOUNDATION | frozenset({"gpucloud.catalog", "gpucloud.prices", "gpucloud.plan", "gpucloud.fleet"}),
    "gpucloud.conformance": FOUNDATION
    | frozenset(
        {
            "gpucloud.catalog",
            "gpucloud.charts",
            "gpucloud.spec",
            "gpucloud.plan",
            "gpucloud.fleet",
            "gpucloud.versions",
            "gpucloud.prices",
        }
    ),
    "gpucloud.policies": FOUNDATION
    | frozenset(
        {"gpucloud.catalog", "gpucloud.spec", "gpucloud.fleet", "gpucloud.prices", "gpucloud.cost", "gpucloud.surface"}
    ),
    "gpucloud.guard": FOUNDATION | frozenset({"gpucloud.plan", "gpucloud.fleet"}),
    # Change impact (plan --compare): resource diffs, replace semantics, disruption per pool, data at risk.
    "gpucloud.impact": FOUNDATION
    | frozenset({"gpucloud.catalog", "gpucloud.plan", "gpucloud.fleet", "gpucloud.advisor"}),
    "gpucloud.preflight": FOUNDATION
    | frozenset({"gpucloud.catalog", "gpucloud.spec", "gpucloud.aws", "gpucloud.versions"}),
    "gpucloud.report": FOUNDATION
    | frozenset(
        {
            "gpucloud.catalog",
            "gpucloud.plan",
            "gpucloud.fleet",
            "gpucloud.advisor",
            "gpucloud.cost",
            "gpucloud.conformance",
            "gpucloud.guard",
            "gpucloud.impact",
        }
    ),
    "gpucloud.pack": FOUNDATION,
    "gpucloud.templates": FOUNDATION,
    "gpucloud.upgrade": FOUNDATION
    | frozenset({"gpucloud.catalog", "gpucloud.spec", "gpucloud.versions", "gpucloud.plan", "gpucloud.conformance"}),
    "gpucloud.stacks": FOUNDATION | frozenset({"gpucloud.plan"}),
    "gpucloud.cli": FOUNDATION
    | frozenset(
        {
            "gpucloud.filecache",
            "gpucloud.guard",
            "gpucloud.pack",
            "gpucloud.templates",
            "gpucloud.tools",
            "gpucloud.versions",
            "gpucloud.upgrade",
            "gpucloud.aws",
            "gpucloud.charts",
            "gpucloud.catalog",
            "gpucloud.spec",
            "gpucloud.prices",
            "gpucloud.plan",
            "gpucloud.advisor",
            "gpucloud.cost",
            "gpucloud.preflight",
            "gpucloud.report",
            "gpucloud.stacks",
            "gpucloud.impact",
        }
    ),
    "gpucloud.__main__": frozenset({"gpucloud.cli"}),
}

# What each layer is, for the diagram's legend in docs/architecture.md.
ROLES = {
    BASE: "the version",
    "gpucloud.fileio": "atomic writes, text decoding, leftover temporary files",
    "gpucloud.package_data": "where the wheel's data (charts, configs, the pack, schemas) lives",
    "gpucloud.surface": "the guarded-surface inventory of the provider SDKs (generated data)",
    "gpucloud.catalog": "GPU facts: instance types, accelerators, prices as data; botocore's EC2 names",
    "gpucloud.charts": "the chart lock, Helm, vendored charts and their values",
    "gpucloud.filecache": "one atomic on-disk cache",
    "gpucloud.aws": "boto3 clients and one message for AWS errors",
    "gpucloud.spec": "the stack spec's pydantic models",
    "gpucloud.fleet": "a plan's pools, typed (pure)",
    "gpucloud.prices": "the price cache and its refresh from AWS",
    "gpucloud.plan": "the offline plan: runs a program under a recording mock runtime",
    "gpucloud.components": "the ComponentResources",
    "gpucloud.advisor": "instance recommendations and the capacity mix",
    "gpucloud.cost": "prices a recorded plan",
    "gpucloud.conformance": "checks a recorded plan against upstream sources",
    "gpucloud.policies": "the CrossGuard guardrail pack",
    "gpucloud.guard": "runs a policy pack over a recorded plan, offline or online",
    "gpucloud.impact": "plan --compare: resource changes, replace semantics, drained GPU nodes, data at risk",
    "gpucloud.preflight": "account checks against AWS",
    "gpucloud.report": "the report pipeline and its renderers",
    "gpucloud.pack": "the installed policy pack's directory and a standalone export",
    "gpucloud.templates": "the team repository template",
    "gpucloud.tools": "helm and kubectl, pinned and checksum-verified, on first use",
    "gpucloud.versions": "Kubernetes versions as data: add-on builds, AMI releases, support dates",
    "gpucloud.upgrade": "the ordered upgrade steps of a stack, each a spec that plans",
    "gpucloud.stacks": "stack discovery and the --changed closure",
    "gpucloud.cli": "the command line",
    "gpucloud.__main__": "python -m gpucloud",
}


@dataclass(frozen=True, order=True)
class Arrow:
    """One import: module `source` imports module `target` (at `line` of the source's file)."""

    source: str
    target: str
    line: int
    # Under `if TYPE_CHECKING:`: an arrow for the layers (the annotation names the module), never run, so no cycle.
    type_only: bool = False

    @property
    def layers(self) -> tuple[str, str]:
        return layer_of(self.source), layer_of(self.target)


def product_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> file of every product module (the symlinked directories read once, under their real path)."""
    out: dict[str, Path] = {}
    for directory, prefix in PRODUCT_DIRS.items():
        base = root / directory
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if directory == "gpucloud" and rel.parts[0] in ("components", "policies"):
                continue
            if "__pycache__" in rel.parts:
                continue
            parts = [*prefix.split("."), *rel.with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def layer_of(module: str) -> str:
    """The longest layer name that is the module or one of its packages."""
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in LAYERS:
            return candidate
    raise KeyError(f"module {module!r} is in no layer; add its package to LAYERS in scripts/layers.py")


# importlib entry points whose first argument names a module: a module loaded this way is still imported.
_LOADERS = frozenset({"import_module", "find_spec", "__import__"})


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) blocks."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else ""
            if name == "TYPE_CHECKING":
                out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[str, int, bool]]:
    package = module if is_package else module.rpartition(".")[0]
    typing_only = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        type_only = id(node) in typing_only
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, type_only
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, node.lineno, type_only
            for alias in node.names:
                if alias.name != "*":
                    yield f"{base}.{alias.name}", node.lineno, type_only
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            first = node.args[0]
            if name in _LOADERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value, node.lineno, type_only


def _resolve(name: str, modules: Mapping[str, Path]) -> str | None:
    parts = name.split(".")
    while parts:
        dotted = ".".join(parts)
        if dotted in modules:
            return dotted
        parts.pop()
    return None


@cache
def arrows(root: Path = ROOT) -> tuple[Arrow, ...]:
    """Every import from one product module to another (a module importing its own package's __init__ is left
    out: Python runs it first anyway, and it would make every package a cycle of one)."""
    modules = product_modules(root)
    out: dict[tuple[str, str, int], Arrow] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for name, line, type_only in _imported_names(tree, module, path.name == "__init__.py"):
            target = _resolve(name, modules)
            if target is None or target == module or module.startswith(target + "."):
                continue
            key = (module, target, line)
            out[key] = Arrow(module, target, line, type_only and getattr(out.get(key), "type_only", True))
    return tuple(sorted(out.values()))


def layer_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Layer -> the other layers its modules import (the drawn graph)."""
    graph: dict[str, set[str]] = {layer: set() for layer in LAYERS}
    for arrow in arrows(root):
        source, target = arrow.layers
        if source != target:
            graph[source].add(target)
    return graph


def violations(root: Path = ROOT) -> list[Arrow]:
    """Imports the table does not allow."""
    out = []
    for arrow in arrows(root):
        source, target = arrow.layers
        if source != target and target not in LAYERS[source]:
            out.append(arrow)
    return out


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted; [] when acyclic."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules it imports when it runs (imports under TYPE_CHECKING left out)."""
    graph: dict[str, set[str]] = {m: set() for m in product_modules(root)}
    for arrow in arrows(root):
        if not arrow.type_only:
            graph[arrow.source].add(arrow.target)
    return graph


def _short(layer: str) -> str:
    return layer.removeprefix("gpucloud.") if layer != BASE else "gpucloud"


def diagram(root: Path = ROOT) -> str:
    """The layer graph as a Mermaid flowchart (an arrow: the upper layer imports the lower; dashed: an import the
    table does not allow), and a table of each layer's imports and allowed imports."""
    graph = layer_graph(root)
    present = {layer_of(m) for m in product_modules(root)}
    order = list(LAYERS)

    def node(layer: str) -> str:
        return _short(layer).replace(".", "_")

    lines = ["```mermaid", "flowchart BT"]
    for layer in LAYERS:
        label = _short(layer) if layer in present else f"{_short(layer)} (no modules yet)"
        lines.append(f'  {node(layer)}["{label}"]')
    # Imports of the base module (the version) draw no arrow: every layer may, and the diagram stays legible.
    for layer in LAYERS:
        for target in sorted(graph[layer] - {BASE}, key=order.index):
            arrow = "-->" if target in LAYERS[layer] else "-.->|not allowed|"
            lines.append(f"  {node(layer)} {arrow} {node(target)}")
    lines += ["```", "", "| layer | what it holds | imports | may import |", "|---|---|---|---|"]
    for layer in LAYERS:
        imports = ", ".join(_short(t) for t in sorted(graph[layer], key=order.index)) or "-"
        allowed = ", ".join(_short(t) for t in sorted(LAYERS[layer], key=order.index)) or "-"
        lines.append(f"| `{layer}` | {ROLES[layer]} | {imports} | {allowed} |")
    return "\n".join(lines)


BEGIN = "<!-- layers:begin (generated by scripts/layers.py --write; tests/layers compares) -->"
END = "<!-- layers:end -->"
DOC = ROOT / "docs" / "architecture.md"


def rendered_doc(text: str, root: Path = ROOT) -> str:
    """The page with its generated block replaced by the current diagram."""
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"{DOC} lacks the markers {BEGIN!r} ... {END!r}")
    return f"{head}{BEGIN}\n{diagram(root)}\n{END}{tail}"


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the diagram in docs/architecture.md")
    args = parser.parse_args(argv)
    if args.write:
        _write_atomic(DOC, rendered_doc(DOC.read_text()))
        print(f"wrote {DOC.relative_to(ROOT)}")
    bad = violations()
    for arrow in bad:
        source, target = arrow.layers
        print(f"{arrow.source}:{arrow.line} imports {arrow.target}: {source} may not import {target}")
    loops = cycles(module_graph())
    for loop in loops:
        print("import cycle: " + " <-> ".join(loop))
    return 1 if bad or loops else 0


if __name__ == "__main__":
    raise SystemExit(main())
