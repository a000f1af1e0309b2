"""Change impact of a plan against a base plan (`gpucloud plan --compare BASE.json`): every resource change
classified (create, update, replace, delete) with the property that forces a replace, the GPU nodes drained or
replaced per pool with the GPU-hours at risk, and the data-holding resources replaced or deleted.
See docs/change-impact.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from gpucloud.impact.changes import CREATE, DELETE, REPLACE, UNCHANGED, UPDATE, Change, classify
from gpucloud.impact.disruption import ALLOW_KEY, ImpactConfigError, allowed_data, data_findings, pool_disruption
from gpucloud.impact.semantics import TABLE_FILE, semantics_for


def change_impact(
    base: Mapping[str, Any], head: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The report's `change_impact` object: `base` is a plan report, `head` the current plan's resources."""
    base_resources = [r for r in base.get("resources") or [] if isinstance(r, Mapping)]
    changes = classify(base_resources, head)
    counts = Counter(c.change for c in changes)
    data = data_findings(changes, allowed_data(config or {}))
    return {
        "base": {"project": base.get("project"), "stack": base.get("stack")},
        "summary": {
            **{k: counts.get(k, 0) for k in (CREATE, UPDATE, REPLACE, DELETE, UNCHANGED)},
            "undecided": sum(1 for c in changes if c.undecided),
            "changes": sum(n for k, n in counts.items() if k != UNCHANGED),
        },
        "changes": [c.to_json() for c in changes if c.change != UNCHANGED],
        "disruption": pool_disruption(base_resources, head, changes),
        "data": data,
        "blocking": sum(1 for d in data if d["blocking"]),
        "allow_key": ALLOW_KEY,
    }


__all__ = ["ALLOW_KEY", "TABLE_FILE", "Change", "ImpactConfigError", "change_impact", "classify", "semantics_for"]
