"""Replace semantics: which input changes force a resource's replacement, read from replace_semantics.json.

The table is data taken from the providers' sources (terraform-provider-aws `ForceNew: true` attributes for
bridged types, pulumi-kubernetes' forceNew properties), each entry with its repository, commit and file;
scripts/replace_semantics.py builds and checks it. A type the table does not list is undecided: the tool says
so instead of guessing update or replace.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TABLE_FILE = Path(__file__).with_name("replace_semantics.json")
_INDEX = re.compile(r"\[[^\]]*\]")
# Resources under the kubernetes package that are not Kubernetes objects (the provider does not diff them).
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml", "kubernetes:kustomize")


@dataclass(frozen=True)
class Semantics:
    type: str
    force_new: tuple[str, ...]
    rolls_nodes: tuple[str, ...]
    source: Mapping[str, Any]
    # Paths the provider replaces on only under a condition (a CustomizeDiff), with the condition in words.
    conditional: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def forced_by(self, paths: Iterable[str]) -> list[str]:
        """The table's force-new paths that any of `paths` (changed input paths) touches."""
        hits: set[str] = set()
        for path in paths:
            p = normalize(path)
            for f in self.force_new:
                if p == f or p.startswith(f + ".") or f.startswith(p + "."):
                    hits.add(f)
        return sorted(hits)

    def conditions(self, paths: Iterable[str]) -> list[str]:
        """For changed paths the provider replaces on only conditionally: "path: condition"."""
        touched = {normalize(p) for p in paths}
        # At or under the path, as for force-new paths: encryptionConfig covers encryptionConfig.resources.
        return [
            f"{f}: {why}"
            for f, why in sorted(self.conditional.items())
            if any(p == f or p.startswith(f + ".") or f.startswith(p + ".") for p in touched)
        ]

    def rolls(self, paths: Iterable[str]) -> list[str]:
        """The changed paths that roll a pool's nodes in place (an update that drains them)."""
        out: set[str] = set()
        for path in paths:
            p = normalize(path)
            for f in self.rolls_nodes:
                if p == f or p.startswith(f + ".") or f.startswith(p + "."):
                    out.add(f)
        return sorted(out)


def normalize(path: str) -> str:
    """`spec.containers[0].image` -> `spec.containers.image`: the table's paths carry no list indexes."""
    return _INDEX.sub("", path)


@cache
def table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TABLE_FILE.read_text())
    return data


def semantics_for(type_: str) -> Semantics | None:
    """The replace semantics of a resource type, None when the table has none (undecided)."""
    data = table()
    entry = data["types"].get(type_)
    # Every Kubernetes object (group/version:Kind) is replaced when its name or namespace changes.
    if (
        entry is None
        and type_.startswith("kubernetes:")
        and not type_.startswith(_NOT_OBJECTS)
        and type_.count(":") == 2
    ):
        entry = data["kubernetes_default"]
    if entry is None:
        return None
    return Semantics(
        type=type_,
        force_new=tuple(entry["force_new"]),
        rolls_nodes=tuple(entry.get("rolls_nodes") or ()),
        source=entry["source"],
        conditional=dict(entry.get("conditional_force_new") or {}),
    )
