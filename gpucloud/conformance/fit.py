"""Fit: every workload's pod fits a node of its pool's instance types, after the DaemonSets that land there.

A pod asks for CPU, memory and accelerators; a node offers its allocatable resources (gpucloud.catalog.allocatable:
the instance type minus the EKS AMI's kube-reserved and eviction threshold) less what every DaemonSet that runs on
that node requests (each DaemonSet puts one pod on every node whose labels and taints it matches). A pod larger
than what is left stays Pending on every node of the pool, however far the pool scales.

The workloads are the scheduling check's (gpucloud.conformance.scheduling.workloads: Deployments, StatefulSets,
Jobs, CronJobs, Pods, MPIJob / PyTorchJob replica templates, registered or rendered, after LimitRange defaults).
The candidate nodes:

* the pool variants (types) of the plan whose labels and taints the pod accepts (node_agents.can_run); a
  workload that fits none of them before the DaemonSets is the scheduling check's finding, not repeated here;
* in a plan without pools (a team stack on a platform's cluster), the types the pod pins with
  ``node.kubernetes.io/instance-type`` (nodeSelector or required node affinity); the platform's DaemonSets are
  not in such a plan and the platform exports no per-pool DaemonSet requests, so only the system reserve is
  subtracted (the DaemonSet overhead is assumed zero), and the message says so.

Severity follows the pod-resources rule: an error for gpucloud's own workloads (a ``gpucloud:`` component in the
URN's type chain), a warning for anyone else's. DaemonSets whose placement is unknown are not subtracted (so an
error is sure); a request that is unknown at preview decides nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpucloud.catalog import get_catalog
from gpucloud.catalog.allocatable import RESERVE_SOURCE, reserve
from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import objects, pod_sets
from gpucloud.conformance.kube import fmt_quantity, pod_requests
from gpucloud.conformance.node_agents import NodeState, can_run, resolve
from gpucloud.conformance.parts import guarded
from gpucloud.conformance.pod_resources import gpucloud_owned
from gpucloud.conformance.scheduling.workloads import Workload, _not_scheduled, workloads
from gpucloud.fleet import labels as L

CHECK = "fit"
RESOURCES = ("cpu", "memory")
# A plan without pools (a team stack) holds none of the platform's DaemonSets, and the platform's stack outputs
# carry no per-pool DaemonSet requests for the team stack to read, so the overhead is taken as zero: a pod that
# fails here fails by more than the DaemonSets' share, and one that passes may still not fit once they run.
ASSUMED_OVERHEAD = (
    "DaemonSet overhead assumed 0: the platform's DaemonSets are not in this plan and its stack outputs export no "
    "per-pool DaemonSet requests, so a pod that passes here may still not fit once they run"
)


def _pinned_types(pod_spec: Mapping[str, Any]) -> list[str] | None:
    """The instance types a pod pins itself to (nodeSelector, or every required node-affinity term), or None."""
    selector = pod_spec.get("nodeSelector") or {}
    if isinstance(selector, Mapping) and isinstance(selector.get(L.INSTANCE_TYPE), str):
        return [selector[L.INSTANCE_TYPE]]
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}).get("nodeSelectorTerms")  # fmt: skip
    if not isinstance(required, list) or not required:
        return None
    types: list[str] = []
    for term in required:
        exprs = [e for e in (term or {}).get("matchExpressions") or [] if isinstance(e, Mapping)]
        pinned = [e for e in exprs if e.get("key") == L.INSTANCE_TYPE and e.get("operator") == "In"]
        if not pinned:
            return None  # one term admits any type
        types.extend(str(v) for e in pinned for v in e.get("values") or [])
    return list(dict.fromkeys(types))


def _overhead(ctx: ConformanceContext, st: NodeState) -> tuple[dict[str, float], list[str]]:
    """CPU and memory the DaemonSets sure to run on this node request, and their names."""
    total = {r: 0.0 for r in RESOURCES}
    names: list[str] = []
    for o in objects(ctx):
        if o.kind != "DaemonSet":
            continue
        for ps in pod_sets(o):
            if can_run(ps.pod_spec, st.labels, st.pool)[0] is not True:
                continue
            wants = pod_requests(ps.pod_spec)
            for r in RESOURCES:
                total[r] += wants.get(r) or 0.0
            names.append(o.name)
    return total, names


def _short(w: Workload, have: Mapping[str, float | None]) -> list[str]:
    """What the pod asks for beyond what a node has left (empty: it fits, or nothing is sure)."""
    out = []
    for r, want in w.requests.items():
        if want is None or want <= 0 or r not in have:
            continue
        left = have[r]
        if left is not None and want > left:
            out.append(f"{r} {fmt_quantity(r, want)} > {fmt_quantity(r, max(left, 0.0))}")
    return out


def _finding(w: Workload, severity: str, message: str, expected: str, source: str) -> Finding:
    ps = w.ps
    return Finding(
        CHECK, severity, ps.obj.urn, ps.path, message, expected, source,  # type: ignore[arg-type]
        object=ps.obj.ref if ps.obj.derived else None,
    )  # fmt: skip


def _with_pools(ctx: ConformanceContext, w: Workload, states: list[NodeState]) -> Iterator[Finding]:
    fit_before: list[NodeState] = []
    shortfalls: dict[str, list[str]] = {}
    for st in states:
        if can_run(w.pod_spec, st.labels, st.pool)[0] is False or st.variant.instance_type is None:
            continue
        have = {r: st.variant.allocatable.get(r) for r in RESOURCES} | {
            r: v for r, v in st.resources.items() if r not in RESOURCES
        }
        if _short(w, have):
            continue  # does not fit even before the DaemonSets: the scheduling check reports it
        fit_before.append(st)
        used, names = _overhead(ctx, st)
        after = {r: (v - used[r]) if (v := have.get(r)) is not None else None for r in RESOURCES}
        short = _short(w, {**have, **after})
        if not short:
            return  # a node of this type takes the pod
        key = f"{st.pool.name} {st.variant.instance_type}"
        shortfalls[key] = [*short, f"after {len(names)} DaemonSets ({', '.join(sorted(set(names))[:6])})"]
    if not fit_before:
        return
    detail = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(shortfalls.items()))
    own = gpucloud_owned(w.ps.obj.urn)
    yield _finding(
        w,
        "error" if own else "warning",
        f"{w.ps.name} fits no node of its pools once their DaemonSets run ({detail}): its pods stay Pending",
        "requests no larger than allocatable minus the DaemonSets' requests, or a larger instance type",
        f"node allocatable from gpucloud.catalog minus {RESERVE_SOURCE}, minus DaemonSet requests (one pod per node)",
    )


def _pinned(w: Workload, types: list[str]) -> Iterator[Finding]:
    catalog = get_catalog()
    shortfalls: dict[str, list[str]] = {}
    for t in types:
        spec = catalog.find(t)
        if spec is None:
            return  # a type outside the catalog: nothing is sure
        r_cpu, r_mem, _ = reserve(spec)
        have: dict[str, float | None] = {"cpu": spec.vcpu - r_cpu, "memory": spec.memory_gib * 2**30 - r_mem}
        if spec.is_gpu and spec.manufacturer == "nvidia":
            have[L.NVIDIA_GPU] = float(spec.accelerator_count)
        short = _short(w, have)
        if not short:
            return
        shortfalls[t] = short
    detail = "; ".join(f"{t}: {', '.join(v)}" for t, v in shortfalls.items())
    own = gpucloud_owned(w.ps.obj.urn)
    yield _finding(
        w,
        "error" if own else "warning",
        f"{w.ps.name} pins instance types whose nodes cannot hold its pod ({detail}): its pods stay Pending. "
        f"{ASSUMED_OVERHEAD}",
        "requests no larger than the type's allocatable (less the DaemonSets), or a larger instance type",
        f"node allocatable from gpucloud.catalog minus {RESERVE_SOURCE}; DaemonSet overhead assumed 0",
    )


def _fit_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    states = resolve(ctx)
    for w in workloads(ctx):
        if _not_scheduled(w.ps):
            continue
        if states:
            yield from _with_pools(ctx, w, states)
            continue
        types = _pinned_types(w.pod_spec)
        if types:
            yield from _pinned(w, types)


@register_check(CHECK)
def check_fit(ctx: ConformanceContext) -> Iterator[Finding]:
    yield from guarded(ctx, CHECK, "workload fit", lambda: _fit_findings(ctx))
