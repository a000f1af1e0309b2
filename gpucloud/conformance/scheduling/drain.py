"""Drain: a PodDisruptionBudget that blocks the eviction-based drains of the interruption handler, Karpenter and
node group updates."""

from __future__ import annotations

from collections.abc import Iterator

from gpucloud.conformance import ConformanceContext, Finding
from gpucloud.conformance.inventory import (
    objects,
    pod_sets,
    releases,
    selector_matches,
)
from gpucloud.conformance.node_agents import (
    CLUSTER_AUTOSCALER,
    KARPENTER,
    NTH,
    AgentSet,
)
from gpucloud.conformance.scheduling.common import CHECK, PDB_DOCS, _finding


def _drain_findings(ctx: ConformanceContext, aset: AgentSet) -> Iterator[Finding]:
    objs = objects(ctx)
    source = PDB_DOCS.format(v=ctx.kubernetes_version)
    handlers = sorted(
        {a.role for a in aset.of(NTH, KARPENTER, CLUSTER_AUTOSCALER)}
        | {n for n in (NTH, KARPENTER, CLUSTER_AUTOSCALER) if releases(ctx, n)}
    )
    who = (
        ", ".join(handlers) if handlers else "node drains (interruption handler, Karpenter, managed node group updates)"
    )
    for pdb in objs:
        if pdb.kind != "PodDisruptionBudget":
            continue
        spec = pdb.spec
        for o in objs:
            if o.namespace != pdb.namespace or o.kind in ("PodDisruptionBudget", "DaemonSet"):
                continue
            for ps in pod_sets(o):
                if not ps.labels or not selector_matches(spec.get("selector"), ps.labels):
                    continue
                expected = ps.count
                scalable = o.kind in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
                why = None
                min_av, max_un = spec.get("minAvailable"), spec.get("maxUnavailable")
                if max_un is not None and str(max_un) in ("0", "0%"):
                    why = "maxUnavailable 0 allows no eviction"
                elif not scalable and (max_un is not None or str(min_av).endswith("%")):
                    why = (
                        f"its pods belong to a {o.kind}, which has no scale subresource, so the disruption "
                        "controller cannot compute a percentage / maxUnavailable budget and allows no eviction"
                    )
                elif min_av is not None and str(min_av) == "100%":
                    why = "minAvailable 100% allows no eviction"
                elif isinstance(min_av, int | float) and expected is not None and min_av >= expected:
                    why = f"minAvailable {int(min_av)} equals the {expected} pods it selects: no eviction is allowed"
                if why:
                    yield _finding(
                        f"{CHECK}.drain",
                        "error",
                        pdb if pdb.derived else None,
                        pdb.urn,
                        "spec",
                        f"PodDisruptionBudget {pdb.namespace}/{pdb.name} blocks the eviction-based drain of {ps.name} "
                        f"by {who}: {why}; the pods are killed when the instance goes anyway, without their preStop "
                        "hook and checkpoint",
                        "a budget that allows at least one eviction (e.g. maxUnavailable 1 on a Deployment, or no "
                        "PDB on a gang job that checkpoints on SIGTERM)",
                        source,
                    )
