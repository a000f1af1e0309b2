"""What a change does to running GPU work and to stored data.

Pools (gpucloud.fleet) whose nodes the change replaces or rolls, with the GPU-hours at risk, and data-holding
resources the change replaces or deletes: each of those blocks the plan unless the stack declares it in
`gpucloud:allowDataReplacement` (a list of URNs or resource names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gpucloud.advisor.mix import MixRequest
from gpucloud.fleet import Pool, pools
from gpucloud.fleet import types as T
from gpucloud.impact.changes import CREATE, DELETE, REPLACE, UNCHANGED, UPDATE, Change, match_key

ALLOW_KEY = "gpucloud:allowDataReplacement"

# What loses data when replaced or deleted: the retain policy's stores (GC-REL-101) plus databases, key-value
# tables, claims and volumes, and the KMS keys whose loss leaves encrypted data unreadable.
DATA_HOLDING = frozenset(
    {
        *T.DATA_STORES,
        "aws:dynamodb/table:Table",
        "aws:rds/instance:Instance",
        "aws:rds/cluster:Cluster",
        "aws:redshift/cluster:Cluster",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "kubernetes:core/v1:PersistentVolume",
        T.KMS_KEY,
        T.KMS_EXTERNAL_KEY,
        T.KMS_REPLICA_KEY,
        T.KMS_REPLICA_EXTERNAL_KEY,
    }
)

_FIELDS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(MixRequest)}
# The checkpoint model's defaults (gpucloud mix, docs/advisor.md): a drained training node writes a checkpoint
# (C) and its job restarts on a replacement (R); the GPU time in between is what the roll costs.
CHECKPOINT_SECONDS = float(_FIELDS["checkpoint_seconds"])
RESTART_SECONDS = float(_FIELDS["restart_seconds"])
HOURS_PER_NODE = (CHECKPOINT_SECONDS + RESTART_SECONDS) / 3600.0
ASSUMPTION = (
    f"each drained or replaced node costs its GPUs {CHECKPOINT_SECONDS:g} s to checkpoint plus {RESTART_SECONDS:g} s "
    f"to restart on a replacement (the checkpoint model's defaults, gpucloud mix): {HOURS_PER_NODE:g} h per GPU; "
    "nodes counted at the base plan's desired size"
)


class ImpactConfigError(ValueError):
    """The stack's allowDataReplacement config is malformed; the message names the key and the fix."""


def allowed_data(config: Mapping[str, Any]) -> frozenset[str]:
    value = config.get(ALLOW_KEY)
    if value is None:
        return frozenset()
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ImpactConfigError(
            f"{ALLOW_KEY} must be a list of resource URNs or names (got {value!r}); e.g. "
            f"`{ALLOW_KEY}: [gpucloud-dev-storage-s3-datasets]` in the stack file"
        )
    return frozenset(value)


def data_findings(changes: Sequence[Change], allowed: frozenset[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in changes:
        if c.type not in DATA_HOLDING or c.change not in (REPLACE, DELETE):
            continue
        declared = c.urn in allowed or c.name in allowed
        what = "replaced" if c.change == REPLACE else "deleted"
        why = f" (forced by {', '.join(c.forced_by)})" if c.forced_by else ""
        out.append(
            {
                "urn": c.urn,
                "name": c.name,
                "type": c.type,
                "change": c.change,
                "forced_by": list(c.forced_by),
                "declared": declared,
                "blocking": not declared,
                "message": f"{c.type} {c.name} is {what}{why}: the data it holds does not move to the new resource"
                + (
                    f"; declared in {ALLOW_KEY}"
                    if declared
                    else f". Fix: keep the name (or its inputs), or declare it in {ALLOW_KEY} in the stack file"
                ),
            }
        )
    return out


def _pool_action(pool: Pool, changes: Mapping[str, Change], nc_urns: Mapping[str, str]) -> tuple[str, str] | None:
    c = changes.get(match_key(pool.urn))
    if c is None or c.change == CREATE:
        return None
    if c.change == DELETE:
        return "removed", "the pool is deleted"
    if c.change == REPLACE:
        return "replaced", f"replaced (forced by {', '.join(c.forced_by)}): new nodes, the old ones drained"
    lt = changes.get(match_key(pool.launch_template or ""))
    if c.type in T.KARPENTER_NODEPOOLS:
        template = [p for p in c.paths + c.may_change if p.startswith("spec.template")]
        if template:
            return "replaced", f"NodePool template changed ({', '.join(template[:3])}): Karpenter drifts its nodes"
        nc = changes.get(nc_urns.get(pool.node_class or "", ""))
        if nc is not None and nc.change in (UPDATE, REPLACE) and (nc.paths or nc.may_change):
            return "replaced", f"EC2NodeClass {nc.name} changed: Karpenter drifts its nodes"
        return None
    also = f"; replaced if {', '.join(c.may_replace_by)} changes (unknown at preview)" if c.may_replace_by else ""
    if c.rolls:
        # A changed launch template gets a new version, so a group that follows its latest version rolls for sure.
        lt_changed = lt is not None and lt.change in (UPDATE, REPLACE)
        certain = [
            p
            for p in c.rolls
            if any(x.startswith(p) for x in c.paths) or (p == "launchTemplate.version" and lt_changed)
        ]
        why = f"launch template {lt.name} changed, " if lt_changed and lt is not None else ""
        verb = "drained" if certain else "may be drained"
        return verb, f"{why}rolling update ({', '.join(c.rolls)} changed){also}"
    if c.may_replace_by:
        return "may be replaced", also.removeprefix("; ")
    if c.undecided and c.change == UPDATE and c.type in T.POOL_TYPES:
        return "undecided", c.undecided
    return None


def pool_disruption(
    base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]], changes: Sequence[Change]
) -> dict[str, Any]:
    by_urn = {match_key(c.urn): c for c in changes if c.change != UNCHANGED}
    head_nc = {str((r.get("inputs") or {}).get("metadata", {}).get("name") or r.get("name")): match_key(str(r["urn"]))
               for r in head if r.get("type") in T.EC2_NODE_CLASSES}  # fmt: skip
    now = {match_key(p.urn): p for p in pools(head)}
    rows: list[dict[str, Any]] = []
    for pool in pools(base):
        action = _pool_action(now.get(match_key(pool.urn), pool), by_urn, head_nc)
        if action is None:
            continue
        verb, reason = action
        nodes = pool.counts.desired if pool.counts.desired is not None else pool.counts.min
        gpus = pool.accelerators_per_node
        row: dict[str, Any] = {
            "urn": pool.urn,
            "name": pool.name,
            "type": pool.type,
            "action": verb,
            "reason": reason,
            "instance_types": list(pool.instance_types),
            "nodes": nodes,
            "gpus_per_node": gpus,
        }
        if nodes is None:
            row["gpu_nodes"] = None
            row["gpu_hours_at_risk"] = None
            row["note"] = "node count unknown at preview (the pool sets no desired size)"
        else:
            row["gpu_nodes"] = nodes if gpus else 0
            row["gpu_hours_at_risk"] = round(nodes * gpus * HOURS_PER_NODE, 2) if verb != "undecided" else None
        rows.append(row)
    return {
        "assumption": ASSUMPTION,
        "hours_per_gpu": round(HOURS_PER_NODE, 4),
        "pools": rows,
        "gpu_nodes": sum(r["gpu_nodes"] or 0 for r in rows if r["action"] in ("replaced", "drained", "removed")),
        "gpu_hours_at_risk": round(
            sum(r["gpu_hours_at_risk"] or 0 for r in rows if r["action"] in ("replaced", "drained", "removed")), 2
        ),
    }
