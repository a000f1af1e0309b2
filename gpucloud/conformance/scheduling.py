"""Scheduling check: would the pods of the plan land, and could the pools grow and drain?

From the node model (gpucloud.conformance.nodes: pools, their labels, taints and allocatable resources) and the
node agents that can actually run there (gpucloud.conformance.node_agents: NFD, GFD, GPU Operator, device
plugins), the "scheduling" check reports:

- a node agent that must run on a GPU / EFA / Neuron pool and cannot (missing label X that only Y sets,
  untolerated taint Z), and a GPU pool that would never advertise nvidia.com/gpu (or EFA / Neuron devices);
- per workload (Deployment, StatefulSet, Job, CronJob, Pod, MPIJob / PyTorchJob replica templates, rendered or
  registered) the pools it can land on (ctx.facts["placements"]), and a workload that fits none: selectors,
  affinity, tolerations, requests vs allocatable, gang size vs the pools' max size;
- a ResourceQuota or LimitRange that rejects a namespace's workloads, and a LimitRange `max` without `default`
  (the API server defaults `default` to `max`, so every container that leaves the resource out gets the max);
- a pool no autoscaler can grow (cluster-autoscaler auto-discovery tags, scale-from-zero node-template tags,
  max size 0, a Karpenter NodePool without controller or EC2NodeClass);
- a PodDisruptionBudget that blocks eviction-based drains (interruption handler, Karpenter, node group updates).

The "invariants" check (gpucloud.conformance.invariants) covers KMS keys and the autoscaler's version.
Verdicts are three-valued: what is only known after deploy (user data built from cluster outputs, charts that
were not rendered) is reported as unverified, never as a defect.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance import invariants as _invariants  # noqa: F401  (registers "invariants")
from gpucloud.conformance.inventory import (
    VENDOR_CHARTS,
    KObject,
    PodSet,
    command_words,
    containers,
    objects,
    pod_sets,
    releases,
    selector_matches,
)
from gpucloud.conformance.kube import (
    LimitRangeItem,
    Tri,
    apply_limit_range,
    ceil_div,
    defaulted_limit_range_item,
    fmt_quantity,
    limit_range_violations,
    pod_requests,
    quantity,
    tri_or,
)
from gpucloud.conformance.node_agents import (
    CLUSTER_AUTOSCALER,
    DCGM_EXPORTER,
    DEVICE_PLUGIN,
    EFA_PLUGIN,
    GFD,
    KARPENTER,
    LOG_AGENT,
    METRICS_AGENT,
    NEURON_PLUGIN,
    NFD_WORKER,
    NTH,
    AgentSet,
    NodeState,
    can_run,
    collect_agents,
    resolve,
)
from gpucloud.conformance.nodes import (
    EFA,
    EKS_CLUSTER,
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    RESERVE_SOURCE,
    Pool,
    build_pools,
    cluster_name,
)
from gpucloud.conformance.stack_options import EXTERNAL_DEVICE_PLUGINS, manages_workloads
from gpucloud.plan.model import is_unknown

CHECK = "scheduling"
DEVICE_RESOURCES = (GPU, EFA, NEURON, NEURONCORE, NEURONDEVICE)
CA_DOCS = "cluster-autoscaler AWS auto-discovery docs (cloudprovider/aws/README.md)"
PDB_DOCS = "Kubernetes {v} eviction API and disruption controller (PodDisruptionBudget)"
QUOTA_DOCS = "Kubernetes {v} ResourceQuota admission"
LIMITRANGE_DOCS = "Kubernetes {v} LimitRange defaulting (SetDefaults_LimitRangeItem) and LimitRanger admission"

# Node agents that must run on every pool with the hardware they serve; log/metrics agents on every GPU pool.
_REQUIRED_ON = {
    DEVICE_PLUGIN: ("nvidia", "error", "it advertises nvidia.com/gpu"),
    GFD: ("nvidia", "error", "it labels the node's GPUs (nvidia.com/gpu.*)"),
    NFD_WORKER: ("nvidia", "error", "it publishes the PCI labels the GPU/EFA agents select"),
    DCGM_EXPORTER: ("nvidia", "error", "it exports the GPU metrics alerts and autoscalers read"),
    EFA_PLUGIN: ("efa", "error", "it advertises vpc.amazonaws.com/efa"),
    NEURON_PLUGIN: ("neuron", "error", "it advertises aws.amazon.com/neuron"),
    LOG_AGENT: ("accelerated", "warning", "the pool's container logs are not shipped"),
    METRICS_AGENT: ("accelerated", "warning", "the pool's node metrics are not scraped"),
}
_LABEL_SETTERS = {
    "feature.node.kubernetes.io/": "node-feature-discovery (nfd-worker + nfd-master)",
    "nvidia.com/gpu.present": "the GPU Operator (only it sets nvidia.com/gpu.present)",
    "nvidia.com/gpu.deploy.": "the GPU Operator",
    "nvidia.com/": "gpu-feature-discovery (through NFD)",
    "vpc.amazonaws.com/efa.present": "an NFD custom rule (vendor 1d0f, device efa*)",
    "karpenter.sh/": "Karpenter (only on its own nodes)",
    "karpenter.k8s.aws/": "Karpenter (only on its own nodes)",
    "eks.amazonaws.com/": "EKS (only on managed node group nodes)",
    "node.kubernetes.io/instance-type": "the kubelet (cloud provider)",
    "topology.kubernetes.io/": "the kubelet (cloud provider)",
}


def _sched_source(ctx: ConformanceContext) -> str:
    return f"kube-scheduler semantics (Kubernetes {ctx.kubernetes_version})"


def who_sets(key: str) -> str:
    for prefix, who in sorted(_LABEL_SETTERS.items(), key=lambda kv: -len(kv[0])):
        if key.startswith(prefix):
            return who
    return "the node group / launch template labels"


def _finding(
    check: str, severity: str, obj: KObject | None, urn: str, field: str, message: str, expected: str, source: str
) -> Finding:
    return Finding(check, severity, urn, field, message, expected, source, object=obj.ref if obj is not None else None)  # type: ignore[arg-type]


# -- shared helpers --------------------------------------------------------------------------------------------


def guarded(ctx: ConformanceContext, check: str, what: str, part: Callable[[], Iterable[Finding]]) -> Iterator[Finding]:
    """Run one part of a check; an object of a shape the part cannot read becomes a warning, not a traceback
    (the schema check reports the object itself)."""
    try:
        yield from list(part())
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        yield Finding(
            f"{check}.unevaluated",
            "warning",
            f"urn:pulumi:{ctx.plan.stack}::{ctx.plan.project}::pulumi:pulumi:Stack::{ctx.plan.project}-{ctx.plan.stack}",
            what,
            f"the {what} part of the {check} check could not read an object of this plan ({type(exc).__name__}: "
            f"{exc}); it was skipped",
            "objects of the shape the Kubernetes API accepts (see the schema findings)",
            _sched_source(ctx),
        )


def _pools_states(ctx: ConformanceContext) -> dict[str, list[NodeState]]:
    out: dict[str, list[NodeState]] = {}
    for st in resolve(ctx):
        out.setdefault(st.pool.urn, []).append(st)
    return out


def _hardware(pool: Pool, what: str) -> bool:
    return {"nvidia": pool.nvidia, "efa": pool.efa, "neuron": pool.neuron, "accelerated": pool.accelerated}[what]


def _missing_label_reason(reasons: list[str]) -> list[str]:
    out = []
    for r in reasons:
        out.append(r)
        for token in r.replace("(", " ").replace(";", " ").split():
            if "/" in token and not token.startswith("["):
                key = token.split("=", 1)[0]
                if "no label" in r or "absent" in r:
                    out[-1] = f"{r} [that label is set only by {who_sets(key)}]"
                break
    return out


# -- node agents on GPU pools ----------------------------------------------------------------------------------


def _agent_findings(ctx: ConformanceContext, aset: AgentSet, states: dict[str, list[NodeState]]) -> Iterator[Finding]:
    pools = build_pools(ctx)
    for agent in aset.agents:
        rule = _REQUIRED_ON.get(agent.role)
        if rule is None:
            continue
        what, severity, why = rule
        for pool in pools:
            if not _hardware(pool, what):
                continue
            relevant = [
                st
                for st in states.get(pool.urn, [])
                if (what == "efa" and st.variant.efa_devices)
                or (what == "nvidia" and st.variant.nvidia_gpus)
                or (what == "neuron" and st.variant.neuron_devices)
                or (what == "accelerated" and (st.variant.nvidia_gpus or st.variant.neuron_devices))
            ]
            verdicts = [st.runs[id(agent)] for st in relevant if id(agent) in st.runs]
            if not verdicts or any(v is not False for v, _ in verdicts):
                continue
            if agent.role == DEVICE_PLUGIN and pool.bottlerocket_nvidia:
                continue
            # Split DaemonSets (one per pool, MIG vs whole GPUs) are fine: the pool only needs one of the role.
            if any(
                st.runs.get(id(other), (False, []))[0] is not False for other in aset.of(agent.role) for st in relevant
            ):
                continue
            reasons = sorted({r for _, rs in verdicts for r in _missing_label_reason(rs)})
            # An operator's operand is fixed where the operator reads its placement: the ClusterPolicy.
            at = agent.origin if agent.synthetic and agent.origin is not None else agent.obj
            name = f"{agent.role} (operand of {at.label})" if agent.synthetic else f"{agent.role} {agent.obj.label}"
            yield _finding(
                f"{CHECK}.daemonset",
                severity,
                at if at.derived else None,
                at.urn,
                "spec.template.spec" if not agent.synthetic else "spec.daemonsets.tolerations",
                f"{name} cannot run on {pool.kind} {pool.name} "
                f"({', '.join(sorted({st.variant.instance_type or '?' for st in relevant}))}), so {why} there: "
                + "; ".join(reasons),
                "a nodeSelector/affinity the pool's nodes satisfy and tolerations for every NoSchedule/NoExecute "
                f"taint of the pool ({', '.join(str(t) for t in pool.taints) or 'none'})",
                f"{agent.source}; {_sched_source(ctx)}",
            )


def _advertise_findings(
    ctx: ConformanceContext, aset: AgentSet, states: dict[str, list[NodeState]]
) -> Iterator[Finding]:
    for pool in build_pools(ctx):
        sts = states.get(pool.urn, [])
        for res, has, plugin_roles, label in (
            (GPU, lambda st: st.variant.nvidia_gpus, (DEVICE_PLUGIN,), "NVIDIA device plugin (or GPU Operator)"),
            (EFA, lambda st: st.variant.efa_devices, (EFA_PLUGIN,), "EFA device plugin"),
            (NEURON, lambda st: st.variant.neuron_devices, (NEURON_PLUGIN,), "Neuron device plugin"),
        ):
            with_hw = [st for st in sts if has(st)]
            if not with_hw or any(res in st.resources for st in with_hw):
                continue
            agents = aset.of(*plugin_roles)
            if agents:
                why = "; ".join(
                    sorted(
                        {
                            f"{a.obj.label}: " + "; ".join(_missing_label_reason(st.runs[id(a)][1]))
                            for a in agents
                            for st in with_hw
                            if id(a) in st.runs
                        }
                    )
                )
                message = f"{pool.kind} {pool.name} would not advertise {res}: no {label} can run there ({why})"
            else:
                message = f"{pool.kind} {pool.name} would not advertise {res}: the plan installs no {label}"
            severity: Any = "error"
            if not agents and not manages_workloads(ctx):
                # Nothing here runs on the cluster: its plugins may well come from elsewhere (GitOps, a stack).
                severity = "warning"
                message += (
                    " and manages no Kubernetes workloads, so the plugin may be installed elsewhere (GitOps, another "
                    f"stack): if it is, state it with the stack config `{EXTERNAL_DEVICE_PLUGINS}: true`"
                )
            yield Finding(
                f"{CHECK}.advertise",
                severity,
                pool.urn,
                pool.types_field,
                message + "; pods requesting it stay Pending",
                f"a {label} DaemonSet whose selector and tolerations match this pool's nodes",
                f"Kubernetes {ctx.kubernetes_version} device plugin API (extended resources exist only where a plugin "
                f"registers them); {_sched_source(ctx)}",
                object=pool.obj_ref,
            )


# -- workloads -------------------------------------------------------------------------------------------------


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


# -- quota and LimitRange --------------------------------------------------------------------------------------


def _quota_usage(w: Workload, key: str) -> float | None:
    """What one pod of the workload counts against a ResourceQuota hard key."""
    if key == "pods":
        return 1.0
    if key.startswith("count/"):
        return None
    if key.startswith("limits."):
        res = key[len("limits.") :]
        total: float | None = 0.0
        for c in w.pod_spec.get("containers") or []:
            q = quantity(((c.get("resources") or {}).get("limits") or {}).get(res))
            total = (
                None
                if total is None or (q is None and res in ((c.get("resources") or {}).get("limits") or {}))
                else (total + (q or 0))
            )
        return total
    res = key[len("requests.") :] if key.startswith("requests.") else key
    return w.requests.get(res, 0.0)


def _quota_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    objs = objects(ctx)
    source = QUOTA_DOCS.format(v=ctx.kubernetes_version)
    by_ns: dict[str, list[Workload]] = {}
    for w in workloads(ctx):
        by_ns.setdefault(w.ps.obj.namespace, []).append(w)
    for q in objs:
        if q.kind != "ResourceQuota" or not isinstance(q.spec.get("hard") or {}, dict):
            continue
        ws = by_ns.get(q.namespace, [])
        for key, hard_raw in (q.spec.get("hard") or {}).items():
            hard = quantity(hard_raw)
            if hard is None:
                continue
            res = key.split(".", 1)[1] if key.startswith(("requests.", "limits.")) else key
            if res in ("cpu", "memory"):
                for w in ws:
                    where = "limits" if key.startswith("limits.") else "requests"
                    missing = [
                        c.get("name", "?")
                        for c in w.pod_spec.get("containers") or []
                        if res not in ((c.get("resources") or {}).get(where) or {})
                    ]
                    if missing:
                        yield _finding(
                            f"{CHECK}.quota",
                            "error",
                            q if q.derived else None,
                            q.urn,
                            f"spec.hard.{key}",
                            f"ResourceQuota {q.namespace}/{q.name} caps {key}, so the API server rejects pods of "
                            f"{w.ps.name} whose containers {missing} set no {where}.{res} (no LimitRange default "
                            "fills it)",
                            f"every container sets {where}.{res}, or a LimitRange in {q.namespace} defaults it",
                            source,
                        )
            at_min: float | None = 0.0
            at_max: float | None = 0.0
            parts = []
            for w in ws:
                per = _quota_usage(w, key)
                if per is None or w.ps.count is None:
                    at_min = at_max = None
                    break
                if per > hard:
                    yield _finding(
                        f"{CHECK}.quota",
                        "error",
                        q if q.derived else None,
                        q.urn,
                        f"spec.hard.{key}",
                        f"ResourceQuota {q.namespace}/{q.name} allows {key}={hard_raw}, but one pod of {w.ps.name} "
                        f"needs {fmt_quantity(res, per)}: every such pod is rejected (exceeded quota)",
                        f"hard {key} >= {fmt_quantity(res, per)}",
                        source,
                    )
                if per:
                    parts.append(f"{w.ps.name}: {w.ps.count} x {fmt_quantity(res, per)}")
                assert at_min is not None and at_max is not None
                at_min += per * w.ps.count
                at_max += per * (w.ps.max_count or w.ps.count)
            if at_min is None or at_max is None:
                continue
            if at_min > hard:
                yield _finding(
                    f"{CHECK}.quota",
                    "error",
                    q if q.derived else None,
                    q.urn,
                    f"spec.hard.{key}",
                    f"the workloads of namespace {q.namespace} need {key}={fmt_quantity(res, at_min)} together "
                    f"({'; '.join(parts)}) but ResourceQuota {q.name} allows {hard_raw}: the last pods are rejected "
                    "(exceeded quota) and their workload never completes",
                    f"hard {key} >= {fmt_quantity(res, at_min)}",
                    source,
                )
            elif at_max > hard:
                yield _finding(
                    f"{CHECK}.quota",
                    "warning",
                    q if q.derived else None,
                    q.urn,
                    f"spec.hard.{key}",
                    f"at their autoscalers' maximum the workloads of namespace {q.namespace} need "
                    f"{key}={fmt_quantity(res, at_max)} but ResourceQuota {q.name} allows {hard_raw}: scale-out stops "
                    "short of the maximum",
                    f"hard {key} >= {fmt_quantity(res, at_max)}",
                    source,
                )


def _limitrange_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    objs = objects(ctx)
    source = LIMITRANGE_DOCS.format(v=ctx.kubernetes_version)
    by_ns: dict[str, list[PodSet]] = {}
    for o in objs:
        if o.kind == "DaemonSet":
            continue
        for ps in pod_sets(o):
            by_ns.setdefault(o.namespace, []).append(ps)
    for ns, items in _limit_items(objs).items():
        for lr, i, item in items:
            for res in item.max_from:
                affected = sorted(
                    {
                        f"{ps.name} container {c.get('name', '?')}"
                        for ps in by_ns.get(ns, [])
                        for c in containers(ps.pod_spec)
                        if res not in ((c.get("resources") or {}).get("limits") or {})
                    }
                )
                device = res in DEVICE_RESOURCES or "/" in res
                yield _finding(
                    f"{CHECK}.limitrange",
                    "error" if device else "warning",
                    lr if lr.derived else None,
                    lr.urn,
                    f"spec.limits[{i}].max.{res}",
                    f"LimitRange {ns}/{lr.name} sets max {res}={item.max[res]} without default: the API server "
                    f"defaults `default` (and `defaultRequest`) to the max, so every container in {ns} that does not "
                    f"set {res} gets {res}={item.max[res]}"
                    + (f" ({'; '.join(affected)})" if affected else "")
                    + (": CPU-only pods then wait for accelerators and use up the quota" if device else ""),
                    f"spec.limits[{i}].default.{res} (and defaultRequest.{res}) set explicitly, e.g. 0",
                    source,
                )
            for ps in by_ns.get(ns, []):
                for c in containers(ps.pod_spec):
                    admitted, _ = apply_limit_range(c, item)
                    why = limit_range_violations(admitted, item)
                    if why:
                        yield _finding(
                            f"{CHECK}.limitrange",
                            "error",
                            ps.obj if ps.obj.derived else None,
                            ps.obj.urn,
                            f"{ps.path}.containers[{c.get('name', '?')}].resources",
                            f"LimitRange {ns}/{lr.name} rejects {ps.name}: container {c.get('name', '?')} "
                            + "; ".join(why),
                            f"within spec.limits[{i}] of LimitRange {lr.name}",
                            source,
                        )


# -- autoscaling -----------------------------------------------------------------------------------------------


def ca_discovery(ctx: ConformanceContext, aset: AgentSet) -> tuple[list[list[str]], list[str], str] | None:
    """cluster-autoscaler's ASG discovery: (tag sets, explicit --nodes names, source), or None without CA."""
    for a in aset.of(CLUSTER_AUTOSCALER):
        tag_sets: list[list[str]] = []
        names: list[str] = []
        for c in containers(a.pod.pod_spec):
            for w in command_words(c):
                if w.startswith("--node-group-auto-discovery=asg:tag="):
                    tag_sets.append(w.split("=", 2)[2].split(","))
                elif w.startswith("--nodes="):
                    names.append(w.split(":", 2)[-1])
        return tag_sets, names, f"{a.source} Deployment args; {CA_DOCS}"
    for r in releases(ctx, "cluster-autoscaler"):
        values = r.inputs.get("values") or {}
        name = (values.get("autoDiscovery") or {}).get("clusterName")
        tags = (values.get("autoDiscovery") or {}).get("tags")
        chart_values = VENDOR_CHARTS / f"cluster-autoscaler-{r.inputs.get('version')}" / "values.yaml"
        if tags is None and chart_values.is_file():
            tags = ((yaml.safe_load(chart_values.read_text()) or {}).get("autoDiscovery") or {}).get("tags")
        tags = tags or [
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/{{ .Values.autoDiscovery.clusterName }}",
        ]
        if not name or is_unknown(name):
            return [], [], f"chart cluster-autoscaler@{r.inputs.get('version')} values; {CA_DOCS}"
        resolved = [str(t).replace("{{ .Values.autoDiscovery.clusterName }}", str(name)) for t in tags]
        return (
            [resolved],
            [],
            f"chart cluster-autoscaler@{r.inputs.get('version')} values.yaml autoDiscovery.tags; {CA_DOCS}",
        )
    return None


def _selected_keys(ws: Iterable[Workload]) -> set[str]:
    keys: set[str] = set()
    for w in ws:
        keys |= set((w.pod_spec.get("nodeSelector") or {}).keys())
        for t in ((w.pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution", {}
        ).get("nodeSelectorTerms") or []:
            keys |= {str(e.get("key")) for e in t.get("matchExpressions") or []}
    return keys


def _autoscaling_findings(ctx: ConformanceContext, aset: AgentSet) -> Iterator[Finding]:
    pools = build_pools(ctx)
    ca = ca_discovery(ctx, aset)
    karpenter = bool(aset.of(KARPENTER)) or bool(releases(ctx, "karpenter"))
    placements = ctx.facts.get("placements") or []
    wl = workloads(ctx)
    by_pool: dict[str, list[Workload]] = {}
    for w, p in zip(wl, placements, strict=False):
        for pl in p.get("pools", []):
            by_pool.setdefault(pl["urn"], []).append(w)
    cluster = cluster_name(ctx)
    # Add-ons of a cluster this plan does not create live in another stack: their absence here proves nothing.
    cluster_in_plan = bool(ctx.plan.of_type(EKS_CLUSTER))
    for pool in pools:
        obj_ref = pool.obj_ref
        if pool.max_size == 0:
            yield Finding(
                f"{CHECK}.autoscaling",
                "error",
                pool.urn,
                "limits" if pool.kind == "Karpenter NodePool" else "maxSize",
                f"{pool.kind} {pool.name} can never have a node: its maximum size is 0",
                "a maximum of at least one node",
                "EC2 Auto Scaling / EKS node group scaling config; Karpenter NodePool limits",
                object=obj_ref,
            )
            continue
        if pool.kind == "Karpenter NodePool":
            if not karpenter and cluster_in_plan:
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "error",
                    pool.urn,
                    "spec",
                    f"Karpenter NodePool {pool.name} is in the plan but no Karpenter controller is: nothing launches "
                    "its nodes",
                    "the Karpenter chart (controller Deployment) installed in the cluster",
                    "Karpenter NodePool API (karpenter.sh/v1)",
                    object=obj_ref,
                )
            if pool.node_class is None:
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "error",
                    pool.urn,
                    "spec.template.spec.nodeClassRef",
                    f"Karpenter NodePool {pool.name} references an EC2NodeClass the plan does not create: Karpenter "
                    "never launches its nodes",
                    "an EC2NodeClass (karpenter.k8s.aws/v1) with the referenced name",
                    "Karpenter NodePool API (karpenter.sh/v1 nodeClassRef)",
                    object=obj_ref,
                )
            continue
        if pool.kind != "self-managed ASG":
            if (
                ca is None
                and not karpenter
                and cluster_in_plan
                and (pool.min_size or 0) < (pool.max_size or 0)
                and pool.accelerated
            ):
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "warning",
                    pool.urn,
                    "scalingConfig",
                    f"{pool.kind} {pool.name} may scale to {pool.max_size} nodes but the plan installs no "
                    "cluster-autoscaler: it stays at its desired size",
                    "cluster-autoscaler (EKS tags managed node groups for its auto-discovery)",
                    CA_DOCS,
                )
            continue
        if ca is None:
            if cluster_in_plan and (pool.max_size or 0) > (pool.min_size or 0):
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "error" if (pool.min_size or 0) == 0 else "warning",
                    pool.urn,
                    "tags",
                    f"no autoscaler in the plan can grow self-managed ASG {pool.name} (min {pool.min_size}, max "
                    f"{pool.max_size}): Karpenter does not manage Auto Scaling groups and cluster-autoscaler is not "
                    "installed",
                    "cluster-autoscaler with auto-discovery of this ASG",
                    CA_DOCS,
                )
            continue
        tag_sets, names, source = ca
        discovered = pool.name in names or any(all(_has_tag(pool.tags, t) for t in ts) for ts in tag_sets)
        # A tag whose key is only known after deploy may be the discovery tag: nothing to prove then.
        unknown_keys = any(k.startswith("<unknown:") for k in pool.tags)
        if not discovered and not unknown_keys:
            wanted = (
                tag_sets[0]
                if tag_sets
                else ["k8s.io/cluster-autoscaler/enabled", f"k8s.io/cluster-autoscaler/{cluster}"]
            )
            missing = [t for t in wanted if not _has_tag(pool.tags, t)]
            yield Finding(
                f"{CHECK}.autoscaling",
                "error",
                pool.urn,
                "tags",
                f"cluster-autoscaler never discovers self-managed ASG {pool.name}: it lacks the auto-discovery "
                f"tag(s) {missing}, so pods waiting for it stay Pending",
                f"ASG tags {', '.join(t if '=' in t else t + ' (any value)' for t in wanted)}",
                source,
            )
        if pool.min_size == 0:
            yield from _scale_from_zero(ctx, pool, by_pool.get(pool.urn, []))


def _expander_findings(ctx: ConformanceContext, aset: AgentSet) -> Iterator[Finding]:
    """cluster-autoscaler's priority expander vs the node groups of one pool (same labels, capacity types)."""
    words: list[str] = []
    namespace = "kube-system"
    for a in aset.of(CLUSTER_AUTOSCALER):
        namespace = a.obj.namespace
        for c in containers(a.pod.pod_spec):
            words += command_words(c)
    for r in releases(ctx, "cluster-autoscaler"):
        expander = ((r.inputs.get("values") or {}).get("extraArgs") or {}).get("expander")
        if expander:
            words.append(f"--expander={expander}")
        namespace = str(r.inputs.get("namespace") or namespace)
    if not any(w.startswith("--expander=") and "priority" in w.split("=", 1)[1].split(",") for w in words):
        return
    cms = [
        o
        for o in objects(ctx)
        if o.kind == "ConfigMap" and o.name == "cluster-autoscaler-priority-expander" and o.namespace == namespace
    ]
    if not cms:
        yield Finding(
            f"{CHECK}.autoscaling",
            "warning",
            (
                aset.of(CLUSTER_AUTOSCALER)[0].obj.urn
                if aset.of(CLUSTER_AUTOSCALER)
                else releases(ctx, "cluster-autoscaler")[0].urn
            ),
            "--expander",
            f"cluster-autoscaler uses the priority expander but {namespace} has no ConfigMap "
            "cluster-autoscaler-priority-expander: it falls back to random choice",
            f"ConfigMap {namespace}/cluster-autoscaler-priority-expander with data.priorities",
            "cluster-autoscaler priority expander docs (expander/priority/readme.md)",
        )
        return
    cm = cms[0]
    try:
        prios = yaml.safe_load(str((cm.manifest.get("data") or {}).get("priorities") or "")) or {}
    except yaml.YAMLError:
        return
    if not isinstance(prios, dict):
        return

    def priority(group: str) -> int | None:
        best = None
        for prio, regexes in prios.items():
            for rx in regexes if isinstance(regexes, list) else [regexes]:
                try:
                    hit = re.search(str(rx), group)
                except re.error:
                    continue
                if hit and (best is None or int(prio) > best):
                    best = int(prio)
        return best

    families: dict[tuple[Any, ...], list[Pool]] = {}
    for pool in build_pools(ctx):
        if pool.kind != "managed node group" or not pool.variants:
            continue
        labels = {
            k: v
            for k, v in pool.variants[0].labels.values.items()
            if "capacity" not in k.lower() and k not in ("eks.amazonaws.com/nodegroup", "topology.kubernetes.io/zone")
        }
        key = (tuple(sorted((k, tuple(sorted(v)) if v else None) for k, v in labels.items())), tuple(pool.taints))
        families.setdefault(key, []).append(pool)
    for members in families.values():
        caps = {
            p.urn: next(iter(p.variants[0].labels.values.get("eks.amazonaws.com/capacityType") or {""}))
            for p in members
        }
        on_demand = [p for p in members if caps[p.urn] == "ON_DEMAND"]
        spot = [p for p in members if caps[p.urn] == "SPOT"]
        for od in on_demand:
            for sp in spot:
                po, ps_ = priority(f"eks-{od.name}-0"), priority(f"eks-{sp.name}-0")
                if po is None or ps_ is None or ps_ <= po or (od.min_size or 0) > 0:
                    continue
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "warning",
                    cm.urn,
                    "data.priorities",
                    f"the priority expander ranks spot node group {sp.name} ({ps_}) above its on-demand twin {od.name} "
                    f"({po}) and the on-demand group has min size 0: on-demand capacity is neither a floor nor "
                    "preferred, so scale-ups go to spot",
                    "on-demand groups ranked above spot, or an on-demand min size for the base capacity",
                    "cluster-autoscaler priority expander docs (highest priority group that can fit wins)",
                    object=cm.ref,
                )


def _has_tag(tags: Mapping[str, str], spec: str) -> bool:
    key, _, value = spec.partition("=")
    return key in tags and (not value or tags[key] == value)


def _scale_from_zero(ctx: ConformanceContext, pool: Pool, ws: list[Workload]) -> Iterator[Finding]:
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    missing: list[str] = []
    selected = _selected_keys(ws)
    if pool.variants and pool.variants[0].labels.open:
        if not any(k.startswith(prefix) for k in pool.tags):
            yield Finding(
                f"{CHECK}.autoscaling",
                "warning",
                pool.urn,
                "tags",
                f"self-managed ASG {pool.name} scales from zero, its node labels and taints come from user data "
                "only known after deploy, and it carries no node-template tags: cluster-autoscaler builds its "
                "template node without those labels and taints",
                f"{prefix}label/<key> and {prefix}taint/<key> tags for every label and taint the nodes register",
                CA_DOCS,
            )
        return
    for key, value in pool.registered_labels.items():
        if key in selected or not ws:
            tag = f"{prefix}label/{key}"
            if pool.tags.get(tag) != value:
                missing.append(f"{tag}={value}")
    for t in pool.taints:
        tag = f"{prefix}taint/{t.key}"
        if pool.tags.get(tag) != f"{t.value}:{t.effect}":
            missing.append(f"{tag}={t.value}:{t.effect}")
    for w in ws:
        for res in (EFA, NEURON):
            if (w.requests.get(res) or 0) > 0 and f"{prefix}resources/{res}" not in pool.tags:
                missing.append(f"{prefix}resources/{res}")
    if missing:
        yield Finding(
            f"{CHECK}.autoscaling",
            "error",
            pool.urn,
            "tags",
            f"self-managed ASG {pool.name} scales from zero but lacks node-template tags {sorted(set(missing))}: "
            "with no node to copy, cluster-autoscaler's template node has none of these labels, taints or "
            "resources, so it never scales the group up for pods that select, tolerate or request them",
            "ASG tags " + ", ".join(sorted(set(missing))),
            CA_DOCS,
        )


# -- drain -----------------------------------------------------------------------------------------------------


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


@register_check("scheduling")
def check_scheduling(ctx: ConformanceContext) -> Iterator[Finding]:
    parts = (
        ("node agents", lambda: _agent_findings(ctx, collect_agents(ctx), _pools_states(ctx))),
        ("device resources", lambda: _advertise_findings(ctx, collect_agents(ctx), _pools_states(ctx))),
        ("workloads", lambda: _workload_findings(ctx, _pools_states(ctx))),
        ("ResourceQuota", lambda: _quota_findings(ctx)),
        ("LimitRange", lambda: _limitrange_findings(ctx)),
        ("autoscaling", lambda: _autoscaling_findings(ctx, collect_agents(ctx))),
        ("priority expander", lambda: _expander_findings(ctx, collect_agents(ctx))),
        ("drain", lambda: _drain_findings(ctx, collect_agents(ctx))),
    )
    for what, part in parts:
        yield from guarded(ctx, CHECK, what, part)
    try:
        states = _pools_states(ctx)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError):
        return  # already reported as unevaluated above
    ctx.facts["scheduling_pools"] = [
        {
            "pool": p.name,
            "kind": p.kind,
            "urn": p.urn,
            "instance_types": sorted({v.instance_type for v in p.variants if v.instance_type}),
            "taints": [str(t) for t in p.taints],
            "min": p.min_size,
            "max": p.max_size,
            "notes": p.notes,
            "advertises": sorted(
                {r for st in states.get(p.urn, []) for r in st.resources if r not in ("cpu", "memory", "pods")}
            ),
        }
        for p in build_pools(ctx)
    ]


__all__ = ["check_scheduling", "fits_resources", "guarded", "who_sets", "workloads"]
