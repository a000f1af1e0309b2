"""Workloads: the pools each one can land on (selectors, affinity, tolerations, requests against allocatable,
gang size against the pools' max size), and a workload that fits none."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud.catalog.allocatable import RESERVE_SOURCE
from gpucloud.conformance import ConformanceContext, Finding
from gpucloud.conformance.inventory import (
    KObject,
    PodSet,
    objects,
    pod_sets,
    selector_matches,
)
from gpucloud.conformance.kube import (
    LimitRangeItem,
    Tri,
    apply_limit_range,
    ceil_div,
    defaulted_limit_range_item,
    fmt_quantity,
    pod_requests,
    tri_or,
)
from gpucloud.conformance.node_agents import (
    NodeState,
    can_run,
)
from gpucloud.conformance.nodes import (
    EFA,
    EKS_CLUSTER,
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    build_pools,
)
from gpucloud.conformance.scheduling.common import (
    CHECK,
    DEVICE_RESOURCES,
    _finding,
    _missing_label_reason,
    _sched_source,
)
from gpucloud.plan.model import is_unknown


@dataclass
class Workload:
    ps: PodSet
    pod_spec: dict[str, Any]  # after LimitRange defaulting
    requests: dict[str, float | None]


def _autoscaled(objs: list[KObject]) -> dict[tuple[str, str, str], tuple[int | None, int | None]]:
    """(namespace, kind, name) -> (min, max) replicas from HPAs and KEDA ScaledObjects."""
    out: dict[tuple[str, str, str], tuple[int | None, int | None]] = {}
    for o in objs:
        spec = o.spec
        ref = spec.get("scaleTargetRef") or {}
        if o.kind == "HorizontalPodAutoscaler":
            lo, hi = spec.get("minReplicas", 1), spec.get("maxReplicas")
        elif o.kind == "ScaledObject" and o.api_version.startswith("keda.sh/"):
            lo, hi = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
        else:
            continue
        kind = str(ref.get("kind") or "Deployment")
        out[(o.namespace, kind, str(ref.get("name")))] = (_int(lo), _int(hi))
    return out


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None or is_unknown(v):
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _limit_items(objs: list[KObject]) -> dict[str, list[tuple[KObject, int, LimitRangeItem]]]:
    out: dict[str, list[tuple[KObject, int, LimitRangeItem]]] = {}
    for o in objs:
        if o.kind != "LimitRange" or not isinstance(o.spec.get("limits"), list):
            continue
        for i, item in enumerate(o.spec["limits"]):
            if not (isinstance(item, dict) and item.get("type") == "Container"):
                continue
            if all(isinstance(item.get(k) or {}, dict) for k in ("default", "defaultRequest", "max", "min")):
                out.setdefault(o.namespace, []).append((o, i, defaulted_limit_range_item(item)))
    return out


def workloads(ctx: ConformanceContext) -> list[Workload]:
    cached = ctx.facts.get("_scheduling_workloads")
    if cached is not None and cached[0] == len(ctx.derived):
        return list(cached[1])
    objs = objects(ctx)
    scaled = _autoscaled(objs)
    limits = _limit_items(objs)
    out = []
    for o in objs:
        if o.kind == "DaemonSet":
            continue
        for ps in pod_sets(o):
            if not ps.pod_spec.get("containers"):
                continue
            lo_hi = scaled.get((o.namespace, o.kind, o.name))
            if lo_hi is not None:
                lo, hi = lo_hi
                ps.count = max(ps.count or 0, lo or 0) or ps.count
                ps.max_count = hi if hi is not None else ps.max_count
            spec = dict(ps.pod_spec)
            for key in ("containers", "initContainers"):
                new = []
                for c in spec.get(key) or []:
                    for _, _, item in limits.get(o.namespace, []):
                        c, _filled = apply_limit_range(c, item)
                    new.append(c)
                if new:
                    spec[key] = new
            out.append(Workload(ps, spec, pod_requests(spec)))
    ctx.facts["_scheduling_workloads"] = (len(ctx.derived), out)
    return out


def _one_per_node(ps: PodSet) -> bool:
    anti = ((ps.pod_spec.get("affinity") or {}).get("podAntiAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or []
    return any(
        t.get("topologyKey") == "kubernetes.io/hostname" and selector_matches(t.get("labelSelector"), ps.labels)
        for t in anti
        if isinstance(t, Mapping)
    )


def fits_resources(w: Workload, st: NodeState) -> tuple[Tri, list[str], int | None]:
    """Requests vs allocatable on one node variant: verdict, reasons, pods per node (None: unknown)."""
    reasons: list[str] = []
    verdict: Tri = True
    per_node: int | None = 1 if _one_per_node(w.ps) else 10**6
    for res, want in w.requests.items():
        if want is None:
            verdict = None if verdict else verdict
            continue
        if want <= 0:
            continue
        have: float | None
        if res in ("cpu", "memory", "pods"):
            have = st.variant.allocatable.get(res)
        elif res in st.resources:
            have = st.resources[res]
        elif res in DEVICE_RESOURCES:
            if res == GPU and st.variant.nvidia_gpus:
                why = "no NVIDIA device plugin runs there"
            elif res == EFA and st.variant.efa_devices:
                why = "no EFA device plugin runs there"
            elif res in (NEURON, NEURONCORE, NEURONDEVICE) and st.variant.neuron_devices:
                why = "no Neuron device plugin runs there"
            else:
                why = "the instance type has none" if st.variant.spec is not None else "unknown instance type"
                if st.variant.spec is None:
                    verdict = None if verdict else verdict
                    per_node = None
                    continue
            reasons.append(f"requests {res}={fmt_quantity(res, want)} but the node advertises none ({why})")
            verdict = False
            continue
        else:
            have = None  # hugepages, ephemeral-storage, vendor resources: not modelled
        if have is None:
            verdict = None if verdict else verdict
            per_node = None if res in ("cpu", "memory") or res in DEVICE_RESOURCES else per_node
            continue
        if want > have:
            reasons.append(
                f"requests {res}={fmt_quantity(res, want)} but {st.variant.instance_type} allocates "
                f"{fmt_quantity(res, have)}" + (" (after the system reserve)" if res in ("cpu", "memory") else "")
            )
            verdict = False
        elif per_node is not None:
            per_node = min(per_node, int(have // want))
    if per_node == 10**6:
        per_node = None
    return verdict, reasons, per_node


_LATE_HOOKS = {"pre-delete", "post-delete", "test", "test-success", "test-failure"}


def _not_scheduled(ps: PodSet) -> str | None:
    """Why the scheduler never places these pods, if it does not."""
    if ps.count == 0:
        return "0 replicas"
    if ps.pod_spec.get("nodeName"):
        return "spec.nodeName set: bypasses the scheduler"
    hooks = (ps.obj.metadata.get("annotations") or {}).get("helm.sh/hook")
    if isinstance(hooks, str) and {h.strip() for h in hooks.split(",")} <= _LATE_HOOKS:
        return f"Helm {hooks} hook: not run at install"
    return None


def _fargate_fits(ctx: ConformanceContext, w: Workload) -> list[str]:
    """Fargate profiles whose selectors take the workload's pods (Fargate runs no GPU or EFA pods)."""
    if any((w.requests.get(r) or 0) > 0 for r in DEVICE_RESOURCES):
        return []
    out = []
    for r in ctx.plan.of_type("aws:eks/fargateProfile:FargateProfile"):
        for sel in r.inputs.get("selectors") or []:
            if not isinstance(sel, dict):
                continue
            ns = str(sel.get("namespace") or "")
            labels = sel.get("labels") or {}
            if fnmatch.fnmatchcase(w.ps.obj.namespace, ns) and all(w.ps.labels.get(k) == v for k, v in labels.items()):
                out.append(str(r.inputs.get("fargateProfileName") or r.name))
                break
    return out


def _workload_findings(ctx: ConformanceContext, states: dict[str, list[NodeState]]) -> Iterator[Finding]:
    pools = {p.urn: p for p in build_pools(ctx)}
    placements: list[dict[str, Any]] = []
    clusters = ctx.plan.of_type(EKS_CLUSTER)
    # EKS Auto Mode brings its own NodePools; a cluster outside the plan may have pools of other stacks.
    auto_mode = any((r.inputs.get("computeConfig") or {}).get("enabled") is True for r in clusters)
    partial = auto_mode or not clusters
    for w in workloads(ctx):
        ps = w.ps
        entry: dict[str, Any] = {
            "workload": ps.name,
            "urn": ps.obj.urn,
            "object": ps.obj.ref,
            "pods": ps.count,
            "requests": {k: fmt_quantity(k, v) for k, v in sorted(w.requests.items())},
            "pools": [],
        }
        placements.append(entry)
        if not pools:
            entry["note"] = "the plan has no node pools (a stack on another stack's cluster): placement not evaluated"
            continue
        skip = _not_scheduled(ps)
        if skip:
            entry["note"] = skip
            continue
        why_not: dict[str, list[str]] = {}
        capacity_nodes: list[int | None] = []
        ppn_all: list[int] = []
        for urn, sts in states.items():
            pool = pools[urn]
            verdicts: list[Tri] = []
            for st in sts:
                sel, reasons = can_run(w.pod_spec, st.labels, pool)
                res_ok, res_reasons, ppn = fits_resources(w, st) if sel is not False else (False, [], None)
                v = False if sel is False or res_ok is False else (None if None in (sel, res_ok) else True)
                verdicts.append(v)
                if v is False:
                    why_not.setdefault(pool.name, []).extend(_missing_label_reason(reasons) + res_reasons)
                elif ppn:
                    ppn_all.append(ppn)
            pv = tri_or(verdicts)
            if pv is not False:
                entry["pools"].append({"pool": pool.name, "kind": pool.kind, "urn": pool.urn, "verified": pv is True})
                capacity_nodes.append(pool.max_size)
        for name in _fargate_fits(ctx, w):
            entry["pools"].append({"pool": name, "kind": "Fargate profile", "urn": None, "verified": True})
        if not entry["pools"] and partial:
            entry["note"] = (
                "fits none of this plan's pools; the cluster's other capacity (EKS Auto Mode, other stacks) is not "
                "in the plan"
            )
            continue
        if not entry["pools"]:
            detail = "; ".join(f"{p}: {'; '.join(sorted(set(r)))}" for p, r in sorted(why_not.items()))
            yield _finding(
                f"{CHECK}.workload",
                "error",
                ps.obj if ps.obj.derived else None,
                ps.obj.urn,
                ps.path,
                f"{ps.name} fits no node pool, its pods stay Pending ({detail})",
                "selectors, tolerations and requests that at least one pool's nodes satisfy",
                (f"{ps.obj.source}; " if ps.obj.source else "")
                + f"{_sched_source(ctx)}; node allocatable from gpucloud.catalog minus {RESERVE_SOURCE}",
            )
            continue
        needs_devices = any((w.requests.get(r) or 0) > 0 for r in DEVICE_RESOURCES)
        count = ps.count or 0
        if needs_devices and count > 1 and ppn_all and all(c is not None for c in capacity_nodes):
            per_node = min(ppn_all)
            nodes_needed = ceil_div(count, per_node)
            most = sum(c or 0 for c in capacity_nodes)
            if nodes_needed > most:
                yield _finding(
                    f"{CHECK}.capacity",
                    "error" if ps.gang else "warning",
                    ps.obj if ps.obj.derived else None,
                    ps.obj.urn,
                    ps.path,
                    f"{ps.name} runs {count} pods at {per_node} per node, so it needs {nodes_needed} nodes, but the "
                    f"pools it fits ({', '.join(p['pool'] for p in entry['pools'])}) grow to {most} nodes in all"
                    + (": the gang never starts" if ps.gang else ""),
                    f"pool max size >= {nodes_needed}, or fewer pods",
                    f"{_sched_source(ctx)}; pool sizes from the plan",
                )
    ctx.facts["placements"] = placements
