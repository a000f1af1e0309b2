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

One module per sub-check (agents, workloads, quotas, autoscaling, drain), sharing common.py; this module runs
them in order. The "invariants" check (gpucloud.conformance.invariants) covers KMS keys and the autoscaler's
version.
Verdicts are three-valued: what is only known after deploy (user data built from cluster outputs, charts that
were not rendered) is reported as unverified, never as a defect.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.node_agents import collect_agents
from gpucloud.conformance.nodes import build_pools
from gpucloud.conformance.parts import guarded
from gpucloud.conformance.scheduling.agents import _advertise_findings, _agent_findings
from gpucloud.conformance.scheduling.autoscaling import _autoscaling_findings, _expander_findings
from gpucloud.conformance.scheduling.common import CHECK, _pools_states, who_sets
from gpucloud.conformance.scheduling.drain import _drain_findings
from gpucloud.conformance.scheduling.quotas import _limitrange_findings, _quota_findings
from gpucloud.conformance.scheduling.workloads import _workload_findings, fits_resources, workloads


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
