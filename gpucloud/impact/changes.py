"""Resource changes between a base plan and the current one, matched by URN: create, update, replace, delete.

Inputs are compared leaf by leaf. A value unknown at preview (the engine's unknown sentinel) on either side is
not a difference the tool can see: when both sides are unknown and nothing the resource depends on changes,
the value is taken as unchanged; when a dependency changes, or only one side is unknown, the path "may change"
and the report says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpucloud.impact.semantics import semantics_for
from gpucloud.plan.model import is_unknown

CREATE, UPDATE, REPLACE, DELETE, UNCHANGED = "create", "update", "replace", "delete", "unchanged"
# Inputs the engine adds that say nothing about the cloud resource (tagsAll mirrors tags).
_IGNORED = frozenset({"__defaults"})


@dataclass
class Change:
    urn: str
    type: str
    name: str
    change: str  # create | update | replace | delete | unchanged
    paths: list[str] = field(default_factory=list)  # input paths that differ
    may_change: list[str] = field(default_factory=list)  # input paths unknown at preview that may differ
    forced_by: list[str] = field(default_factory=list)  # the force-new paths a replace is due to
    may_replace_by: list[str] = field(default_factory=list)  # force-new paths among may_change
    rolls: list[str] = field(default_factory=list)  # changed paths that roll a pool's nodes in place
    replace_if: list[str] = field(default_factory=list)  # conditional force-new paths changed, with the condition
    undecided: str | None = None  # why update vs replace cannot be decided
    source: Mapping[str, Any] | None = None  # where the replace semantics come from

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"urn": self.urn, "type": self.type, "name": self.name, "change": self.change}
        for key in ("paths", "may_change", "forced_by", "may_replace_by", "replace_if", "rolls"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.undecided:
            out["undecided"] = self.undecided
        if self.source is not None and (self.forced_by or self.may_replace_by or self.replace_if):
            out["source"] = dict(self.source)
        return out


def leaf_diff(before: Any, after: Any, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """(path, unknown) for every leaf that differs; `unknown` when a side is only known after `up`."""
    if is_unknown(before) or is_unknown(after):
        if before != after or is_unknown(before):
            yield prefix or "(inputs)", True
        return
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in sorted(set(before) | set(after)):
            if key in _IGNORED:
                continue
            sub = f"{prefix}.{key}" if prefix else str(key)
            if key not in before or key not in after:
                yield sub, False
            else:
                yield from leaf_diff(before[key], after[key], sub)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            yield from leaf_diff(b, a, f"{prefix}[{i}]")
        return
    if before != after:
        yield prefix or "(inputs)", False


def match_key(urn: str) -> str:
    """The URN without its stack segment: a base planned as another stack (staging against prod, or a test's
    second stack file) still matches resource by resource; within one stack this is the URN itself."""
    head, sep, rest = urn.partition("::")
    return f"urn:pulumi:*{sep}{rest}" if head.startswith("urn:pulumi:") and sep else urn


def _by_urn(resources: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {match_key(str(r["urn"])): r for r in resources if isinstance(r, Mapping) and r.get("custom", True)}


def classify(base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Every custom resource of base and head (components aside: they have no cloud state), in head order
    with deletions last."""
    before, after = _by_urn(base), _by_urn(head)
    changes: dict[str, Change] = {}
    both_unknown: dict[str, list[str]] = {}
    for urn, r in after.items():
        if urn not in before:
            changes[urn] = Change(str(r["urn"]), str(r.get("type")), str(r.get("name")), CREATE)
            continue
        known, unknown, same_unknown = [], [], []
        for path, is_unk in leaf_diff(before[urn].get("inputs") or {}, r.get("inputs") or {}):
            if not is_unk:
                known.append(path)
            elif is_unknown(_get(before[urn].get("inputs"), path)) and is_unknown(_get(r.get("inputs"), path)):
                same_unknown.append(path)
            else:
                unknown.append(path)
        changes[urn] = Change(str(r["urn"]), str(r.get("type")), str(r.get("name")), UNCHANGED, known, unknown)
        both_unknown[urn] = same_unknown
    for urn, r in before.items():
        if urn not in after:
            changes[urn] = Change(str(r["urn"]), str(r.get("type")), str(r.get("name")), DELETE)
    # An output the resource reads is unknown on both sides; it may differ when what it reads from changes.
    moved = {u for u, c in changes.items() if c.change != UNCHANGED or c.paths or c.may_change}
    for urn, paths in both_unknown.items():
        hit = [p for p in paths if _reads(after[urn], before[urn], p) & moved]
        if hit:
            changes[urn].may_change = sorted(set(changes[urn].may_change) | set(hit))
    for c in changes.values():
        if c.change in (CREATE, DELETE) or not (c.paths or c.may_change):
            continue
        _decide(c)
    return list(changes.values())


def _reads(after: Mapping[str, Any], before: Mapping[str, Any], path: str) -> set[str]:
    """What an input path may read from: its top-level input's property dependencies when the plan records them,
    else every dependency of the resource (the report's resources carry only the latter)."""
    top = path.split(".")[0].split("[")[0]
    out: set[str] = set()
    for r in (after, before):
        deps = r.get("propertyDependencies") or r.get("property_dependencies")
        chosen = deps.get(top, ()) if isinstance(deps, Mapping) else r.get("dependencies") or ()
        out |= {match_key(str(d)) for d in chosen}
    return out


def _decide(c: Change) -> None:
    sem = semantics_for(c.type)
    if sem is None:
        c.change = UPDATE
        c.undecided = f"update or replace: undecided (no replace semantics for {c.type})"
        return
    c.source = sem.source
    c.forced_by = sem.forced_by(c.paths)
    c.may_replace_by = [p for p in sem.forced_by(c.may_change) if p not in c.forced_by]
    c.replace_if = sem.conditions(c.paths + c.may_change)
    c.rolls = sem.rolls(c.paths + c.may_change)
    c.change = REPLACE if c.forced_by else UPDATE


def _get(inputs: Any, path: str) -> Any:
    value = inputs
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("[") and isinstance(value, list):
            i = int(part[1:-1])
            value = value[i] if i < len(value) else None
        elif isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value
