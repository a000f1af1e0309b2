"""The policy table of docs/guardrails.md, parsed: what the docs say each policy judges."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "guardrails.md"
ANY_KUBERNETES = "any Kubernetes kind"
ANY_TYPE = "any resource type"


@dataclass(frozen=True)
class Row:
    id: str
    name: str
    kind: str
    severity: str
    default: str
    paths: frozenset[str]  # short names as written: `ec2.LaunchTemplate`, `karpenter.sh/v1 NodePool`
    any_kubernetes: bool
    any_type: bool = False


def short(type_token: str) -> str:
    """`aws:ec2/launchTemplate:LaunchTemplate` -> `ec2.LaunchTemplate`; `kubernetes:apps/v1:Deployment` ->
    `apps/v1 Deployment`: the names the table uses."""
    provider, module, name = type_token.split(":")
    return f"{module.split('/')[0]}.{name}" if provider == "aws" else f"{module} {name}"


def rows() -> dict[str, Row]:
    out: dict[str, Row] = {}
    for line in DOC.read_text().splitlines():
        if not line.startswith("| <a id="):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        ident = re.sub(r"<[^>]+>", "", cells[0])
        name = cells[1].strip("`")
        # Only the part before "; reads" is where the policy reports; what it reads may be anywhere.
        judged = cells[5].split("; reads", 1)[0]
        out[name] = Row(
            ident,
            name,
            cells[2],
            cells[3],
            cells[4],
            frozenset(re.findall(r"`([^`]+)`", judged)),
            ANY_KUBERNETES in cells[5],
            ANY_TYPE in cells[5],
        )
    return out


def documents(row: Row, type_token: str) -> bool:
    """Whether the row's paths cover a resource of this type (chart-rendered Kubernetes kinds included)."""
    if row.any_type or (row.any_kubernetes and type_token.startswith("kubernetes:")):
        return True
    return short(type_token) in row.paths
