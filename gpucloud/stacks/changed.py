"""Which stacks a change can affect: each stack's inputs (project file, stack file, policy config, the Python
modules its program and the planner import, transitively, and the data files in their packages), matched against
the paths `git diff BASE` reports.

The import closure is computed from the source (ast), not listed by hand: `import a.b`, `from a import b`,
relative imports, imports inside functions (the CLI imports the planner lazily) and dotted module names given as
string literals (`importlib.import_module("gpucloud.cost")`). Only modules that resolve to files inside the
repository count; third-party packages change through the dependency pins, which are repository-wide inputs.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from gpucloud.plan.engine import PlanInputError
from gpucloud.stacks.discovery import StackInfo, policy_config_for

# Inputs of every plan that are not Python modules of the repository: dependency pins, the vendored upstream
# charts (read through paths, not imports) and the plan contract.
GLOBAL_INPUTS = ("pyproject.toml", "constraints.txt", "requirements.txt", "vendor/")
# The module that plans a stack: its closure is the planner (engine, cost, guardrails, conformance, report).
PLANNER_MODULE = "gpucloud.cli.plan"
# The guardrail pack the planner evaluates: loaded through gpucloud.guard.packs (entry point or the pack
# directory), so no import statement leads to it from the planner.
PACK_MODULES = ("gpucloud.policies", "gpucloud.policies.gpucloud_policies.pack")


class ChangedError(PlanInputError):
    """`--changed BASE` could not compute the diff (not a git checkout, unknown revision)."""


def _module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


class ImportGraph:
    """Resolves modules to files under search roots and follows their imports."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [r.resolve() for r in roots]

    def resolve(self, dotted: str) -> list[Path]:
        """The files importing `dotted` executes: each package __init__ on the way, then the module."""
        return list(_resolve(tuple(self.roots), dotted))

    def module_name(self, path: Path) -> tuple[str, bool]:
        """(dotted name, is a package) of a file under one of the roots."""
        for root in self.roots:
            if path.is_relative_to(root):
                rel = path.relative_to(root).with_suffix("")
                parts = list(rel.parts)
                package = parts[-1] == "__init__"
                if package:
                    parts = parts[:-1]
                return ".".join(parts), package
        return path.stem, False

    def imports_of(self, path: Path) -> tuple[str, ...]:
        """Dotted names a file imports (absolute, relative resolved, and dotted string literals)."""
        module, is_package = self.module_name(path)
        return _imports_of(path, module, is_package)

    def closure(self, start: Iterable[Path]) -> set[Path]:
        seen: set[Path] = set()
        for path in start:
            seen |= _closure(tuple(self.roots), path.resolve())
        return seen


@cache
def _resolve(roots: tuple[Path, ...], dotted: str) -> tuple[Path, ...]:
    parts = dotted.split(".")
    for root in roots:
        if _module_file(root, parts[0]) is None:
            continue
        files = []
        for i in range(1, len(parts) + 1):
            found = _module_file(root, ".".join(parts[:i]))
            if found is None:
                break
            files.append(found)
        return tuple(files)
    return ()


# One process plans or inspects many stacks that share most modules: parse each file and walk each closure once.
@cache
def _closure(roots: tuple[Path, ...], start: Path) -> frozenset[Path]:
    graph = ImportGraph(roots)
    seen: set[Path] = set()
    todo = [start]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        for name in graph.imports_of(path):
            todo.extend(f for f in graph.resolve(name) if f not in seen)
    return frozenset(seen)


@cache
def _imports_of(path: Path, module: str, is_package: bool) -> tuple[str, ...]:
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return ()
    return tuple(dict.fromkeys(_names(tree, module, is_package)))


def _names(tree: ast.Module, module: str, is_package: bool) -> Iterable[str]:
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, base] if base else anchor)
            if base:
                yield base
            for alias in node.names:
                if alias.name != "*" and base:
                    yield f"{base}.{alias.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _dotted(node.value):
            yield node.value


def _dotted(text: str) -> bool:
    parts = text.split(".")
    return len(parts) > 1 and all(p.isidentifier() for p in parts)


def package_data(files: Iterable[Path]) -> set[Path]:
    """Non-Python files next to the package modules in `files` (schemas, locks, catalogs they read)."""
    out: set[Path] = set()
    for f in files:
        if f.name != "__init__.py":
            continue
        for entry in f.parent.iterdir():
            if entry.is_file() and entry.suffix not in (".py", ".pyc"):
                out.add(entry)
    return out


def stack_inputs(root: Path, stack: StackInfo, graph: ImportGraph | None = None) -> set[str]:
    """Repository-relative paths (files; a trailing '/' marks a directory prefix) a stack's plan reads."""
    root = root.resolve()
    from gpucloud.plan.engine import Project

    project = Project(root / stack.program)
    graph = graph or ImportGraph([project.dir, root])
    start = [project.main, *graph.resolve(PLANNER_MODULE), *(p for m in PACK_MODULES for p in graph.resolve(m))]
    modules = graph.closure(start)
    paths = {*modules, *package_data(modules), project.file, root / stack.stack_file}
    requirements = project.dir / "requirements.txt"
    if requirements.is_file():
        paths.add(requirements)
    config = policy_config_for(project.dir, stack.stack, stack.environment, cwd=root)
    if config is not None:
        paths.add(config)
    out = {p.resolve().relative_to(root).as_posix() for p in paths if p.resolve().is_relative_to(root)}
    return out | set(GLOBAL_INPUTS)


def affected(root: Path, stacks: Sequence[StackInfo], changed: Iterable[str]) -> list[StackInfo]:
    """The stacks (in the given order) whose inputs include a changed path, and the stacks that depend on them."""
    changed = [c.strip("/") for c in changed if c.strip()]
    if not changed:
        return []
    hit: set[str] = set()
    for s in stacks:
        inputs = stack_inputs(root, s)
        if any(_matches(c, inputs) for c in changed):
            hit.add(s.id)
    # A dependent reads its dependency's outputs: when those can change, so can its plan under the real CLI.
    grew = True
    while grew:
        grew = False
        for s in stacks:
            if s.id not in hit and hit.intersection(s.depends_on):
                hit.add(s.id)
                grew = True
    return [s for s in stacks if s.id in hit]


def _matches(changed: str, inputs: set[str]) -> bool:
    if changed in inputs:
        return True
    return any(i.endswith("/") and changed.startswith(i) for i in inputs)


def git_changed(root: Path, base: str) -> list[str]:
    """Paths `git diff BASE` reports (committed and uncommitted), plus untracked files, relative to `root`."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=60)
        except FileNotFoundError:
            raise ChangedError("--changed needs git, which is not on PATH") from None
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
            raise ChangedError(
                f"--changed {base}: git {' '.join(args[:2])} failed ({detail}); give a revision this checkout has, "
                "e.g. origin/main (fetch it first: git fetch origin main)"
            )
        return done.stdout

    git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    names = git("diff", "--name-only", "--relative", base, "--").splitlines()
    names += git("ls-files", "--others", "--exclude-standard").splitlines()
    return sorted({n for n in names if n})
