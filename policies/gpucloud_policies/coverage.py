"""Which guarded surface of which resource type the pack reads, derived from the guardrails' own declarations.

The surface inventory (gpucloud.surface, generated from the provider SDKs) says which surfaces each type's
inputs carry; each guardrail declares the surfaces it judges and the types it reads (``Guardrail.surfaces``,
``Guardrail.read_types``). A (type, surface) pair is *read* when a guardrail of that surface reads the type,
else it must be in the scope table (scope.json) with a reason: "not yet read" where nobody judges it yet, or why
it is out of scope. tests/policies/test_coverage.py fails on a pair that is neither, and docs/guardrails.md shows
the table rendered here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from gpucloud import surface

SCOPE_FILE = Path(__file__).resolve().parent / "scope.json"
NOT_YET_READ = "not yet read"


def matches(token: str, patterns: Iterable[str]) -> bool:
    """A type token against read declarations: exact tokens or fnmatch patterns; "!pattern" excludes."""
    pats = list(patterns)
    if any(p.startswith("!") and fnmatchcase(token, p[1:]) for p in pats):
        return False
    return any(not p.startswith("!") and (p == token or fnmatchcase(token, p)) for p in pats)


@functools.cache
def scope() -> dict[str, dict[str, str]]:
    """Type token -> {surface: reason} for the pairs no guardrail reads."""
    data = json.loads(SCOPE_FILE.read_text(encoding="utf-8"))
    found: dict[str, dict[str, str]] = data["types"]
    return found


@functools.cache
def reviewed_elsewhere() -> dict[str, str]:
    """Types outside the SDK inventory (custom resources, other providers) reviewed by hand, each with its reason."""
    data = json.loads(SCOPE_FILE.read_text(encoding="utf-8"))
    found: dict[str, str] = data.get("reviewed", {})
    return found


_GUARDRAILS: list[tuple[object, ...]] = []


def use(guardrails: tuple[object, ...]) -> None:
    """The pack's guardrails, given by the registry once it has built them (importing the package does it)."""
    _GUARDRAILS[:] = [guardrails]


def _guardrails() -> tuple[object, ...]:
    if not _GUARDRAILS:
        raise RuntimeError("the guardrail registry has not registered the pack's guardrails with coverage.use()")
    return _GUARDRAILS[0]


def readers(token: str, surface_id: str | None = None) -> list[str]:
    """Names of the guardrails that read this type (on this surface, when given)."""
    return [
        g.name  # type: ignore[attr-defined]
        for g in _guardrails()
        if (surface_id is None or surface_id in g.surfaces)  # type: ignore[attr-defined]
        and matches(token, g.read_types)  # type: ignore[attr-defined]
    ]


@dataclass(frozen=True)
class Pair:
    token: str
    surface: str
    readers: tuple[str, ...]
    reason: str | None  # the scope table's reason when nobody reads it; None for a pair that is neither

    @property
    def status(self) -> str:
        if self.readers:
            return "read"
        if self.reason is None:
            return "untriaged"
        return "not yet read" if self.reason.startswith(NOT_YET_READ) else "out of scope"


def pairs(inventory: Mapping[str, Mapping[str, object]] | None = None) -> list[Pair]:
    """Every (type, surface) pair of the inventory with who reads it or why nobody does."""
    types = surface.types() if inventory is None else inventory
    table = scope()
    out = []
    for token, surfaces in types.items():
        for s in surfaces:
            who = tuple(readers(token, s))
            out.append(Pair(token, s, who, None if who else table.get(token, {}).get(s)))
    return out


@functools.cache
def named_by_a_reader(token: str) -> bool:
    """A guardrail names this exact type (a pattern such as "kubernetes:*" reads a surface, it reviews no type)."""
    return any(token in g.read_types for g in _guardrails())  # type: ignore[attr-defined]


@functools.cache
def triaged(token: str) -> bool:
    """Someone decided what this type's surfaces are and who reads them: it is in the SDK inventory (every pair
    read or in the scope table, which the coverage test holds), reviewed by hand, or named by a guardrail."""
    return token in surface.types() or token in reviewed_elsewhere() or named_by_a_reader(token)


@functools.cache
def unread_roots(token: str, surfaces: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(surface, top-level input) for each of the given surfaces of the type that nobody reads yet: a resource
    setting one of these inputs uses a surface no guardrail judges."""
    carried = surface.types().get(token, {})
    out: list[tuple[str, str]] = []
    for s in unread(token, surfaces):
        for root in dict.fromkeys(p.split(".", 1)[0] for p in carried[s]):
            out.append((s, root))
    return tuple(out)


def unread(token: str, surfaces: Iterable[str]) -> list[str]:
    """The given surfaces of an inventory type that no guardrail reads and the scope table calls "not yet read"."""
    carried = surface.types().get(token, {})
    table = scope().get(token, {})
    return [
        s
        for s in surfaces
        if s in carried and not readers(token, s) and table.get(s, NOT_YET_READ).startswith(NOT_YET_READ)
    ]


def table_markdown(inventory: Mapping[str, Mapping[str, object]] | None = None) -> str:
    """The per-surface coverage table for docs/guardrails.md."""
    found = pairs(inventory)
    head = [
        "| surface | types carrying it | read by a guardrail | not yet read | out of scope (reason given) |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = []
    for s, about in surface.surfaces().items():
        mine = [p for p in found if p.surface == s]
        count = {k: sum(1 for p in mine if p.status == k) for k in ("read", "not yet read", "out of scope")}
        label = about.split(":", 1)[0]
        rows.append(
            f"| {s} ({label}) | {len(mine)} | {count['read']} | {count['not yet read']} | {count['out of scope']} |"
        )
    return "\n".join(head + rows)


DOC_START = "<!-- surface-coverage:start -->"
DOC_END = "<!-- surface-coverage:end -->"


def with_table(doc: str) -> str:
    """docs/guardrails.md with the generated coverage table between its markers."""
    head, _, rest = doc.partition(DOC_START)
    _, _, tail = rest.partition(DOC_END)
    return f"{head}{DOC_START}\n{table_markdown()}\n{DOC_END}{tail}"
