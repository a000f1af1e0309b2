"""Node agents on accelerated pools: an agent that must run there and cannot, and a pool that would never
advertise its devices (nvidia.com/gpu, EFA, Neuron)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpucloud.conformance import ConformanceContext, Finding
from gpucloud.conformance.clusters import runs_workloads_on, workload_urns
from gpucloud.conformance.node_agents import (
    DEVICE_PLUGIN,
    EFA_PLUGIN,
    NEURON_PLUGIN,
    AgentSet,
    NodeState,
)
from gpucloud.conformance.nodes import (
    EFA,
    GPU,
    NEURON,
    build_pools,
)
from gpucloud.conformance.scheduling.common import (
    _REQUIRED_ON,
    CHECK,
    _finding,
    _hardware,
    _missing_label_reason,
    _sched_source,
)
from gpucloud.conformance.stack_options import EXTERNAL_DEVICE_PLUGINS


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
            runs = runs_workloads_on(ctx, pool.urn) if not agents else "yes"
            if runs != "yes":
                # Nothing of the plan surely runs on this pool's cluster: its plugins may well come from elsewhere
                # (GitOps, another stack), so the plugin's absence here proves nothing.
                severity = "warning"
                message += (
                    " and manages no Kubernetes workloads" + (" on its cluster" if workload_urns(ctx) else "")
                    if runs == "no"
                    else " and cannot tell whether its Kubernetes workloads run on this pool's cluster (their "
                    "provider names none of the plan's clusters, or the pool's cluster is not in the plan)"
                )
                message += (
                    ", so the plugin may be installed elsewhere (GitOps, another stack): if it is, state it with the "
                    f"stack config `{EXTERNAL_DEVICE_PLUGINS}: true`"
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
