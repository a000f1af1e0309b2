"""How fast a spec change rolls a pool's nodes, chosen once per pool and read by every backend.

One choice, three encodings: an EKS managed node group's `updateConfig`, a self-managed ASG's `instanceRefresh`
preferences and a Karpenter NodePool's disruption budgets. The rule (docs/upgrades.md, "GPU-safe rollouts"):

* capacity that cannot surge (a Capacity Block, a targeted ODCR) is replaced terminate-before-launch, one node
  at a time: there is no spare reserved instance to launch the replacement into;
* training and HPC pools (synchronous gangs: every drained node restarts the whole job) go one node at a time;
* inference and rendering pools (independent replicas) go a quarter of the group at a time, at least one node;
* `rollout.maxUnavailable` / `rollout.maxUnavailablePercentage` in the stack spec override the pace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpucloud.components.nodepools.capacity import capacity_types
from gpucloud.spec.pools import NodePoolSpec

# The default share of an independent-replica group replaced at once (a gpucloud choice: three quarters of the
# serving capacity stays up during a roll).
INDEPENDENT_SHARE = 4
# EKS UpdateConfig: maxUnavailable at most 100 nodes, maxUnavailablePercentage 1-100 (AWS::EKS::Nodegroup
# UpdateConfig, CloudFormation User Guide; EKS User Guide "Managed node update behavior": "The maximum unavailable
# has a quota of 100 nodes. The default value is one node").
EKS_MAX_UNAVAILABLE = 100
# PutLifecycleHook HeartbeatTimeout: 30 to 7200 seconds (Amazon EC2 Auto Scaling API Reference).
HOOK_MIN_SECONDS = 30
HOOK_MAX_SECONDS = 7200
# The drain hook's timeout before a checkpoint model is declared (what the pools shipped with).
DEFAULT_HOOK_SECONDS = 300
# What NTH needs on top of the pods' grace to cordon, evict and complete the hook (a gpucloud margin).
NTH_DRAIN_OVERHEAD_SECONDS = 60
# Karpenter's node terminationGracePeriod before a checkpoint model is declared.
DEFAULT_KARPENTER_GRACE = "2h"


@dataclass(frozen=True)
class Pace:
    """At most `nodes` nodes (or `percentage` percent) replaced at once; `surge` false: terminate before launch."""

    nodes: int | None
    percentage: int | None
    surge: bool

    def as_percentage(self, group_max: int) -> int:
        """The pace as a percentage of a group of `group_max` nodes, rounded up, 1-100."""
        if self.percentage is not None:
            return self.percentage
        assert self.nodes is not None
        return max(1, min(100, math.ceil(100 * self.nodes / max(1, group_max))))


def pace(pool: NodePoolSpec, group_max: int, *, fixed_capacity: bool) -> Pace:
    """The pool's rollout pace for one group of at most `group_max` nodes."""
    r = pool.rollout
    surge = not fixed_capacity
    if r.max_unavailable is not None:
        return Pace(r.max_unavailable, None, surge)
    if r.max_unavailable_percentage is not None:
        return Pace(None, r.max_unavailable_percentage, surge)
    if fixed_capacity or pool.workload in ("training", "hpc"):
        return Pace(1, None, surge)
    return Pace(min(EKS_MAX_UNAVAILABLE, max(1, group_max // INDEPENDENT_SHARE)), None, surge)


def karpenter_fixed_capacity(pool: NodePoolSpec) -> bool:
    """Karpenter may launch the pool's nodes only into its reservation: a drift replacement (launched before the
    drifted node is drained) has nowhere to go."""
    return capacity_types(pool) == ["reserved"]


def hook_timeout_seconds(pool: NodePoolSpec) -> int:
    """The ASG termination hook's heartbeat: NTH's drain of pods that each get the checkpoint-sized grace."""
    grace = pool.rollout.drain_grace_seconds
    if grace is None:
        return DEFAULT_HOOK_SECONDS
    return max(HOOK_MIN_SECONDS, min(HOOK_MAX_SECONDS, max(DEFAULT_HOOK_SECONDS, grace + NTH_DRAIN_OVERHEAD_SECONDS)))


def nth_node_grace_seconds(pools: list[NodePoolSpec], default: int) -> int:
    """NTH's nodeTerminationGracePeriod: the longest drain (pod grace plus NTH's overhead) of the pools it serves."""
    drains = [
        g + NTH_DRAIN_OVERHEAD_SECONDS
        for p in pools
        if p.backend != "karpenter" and (g := p.rollout.drain_grace_seconds) is not None
    ]
    return min(HOOK_MAX_SECONDS, max([default, *drains]))


def karpenter_grace(pool: NodePoolSpec) -> str:
    """A Karpenter node's terminationGracePeriod: one checkpoint interval plus the emergency write.

    Karpenter deletes a pod early enough that it gets its own terminationGracePeriodSeconds before the node's
    grace ends (karpenter.sh/v1 NodePool spec.template.spec.terminationGracePeriod), and holds a node with
    do-not-disrupt or PDB-blocked pods until then; one interval lets a running job reach its next regular
    checkpoint before the emergency one.
    """
    explicit = pool.karpenter.termination_grace_period
    if explicit is not None:
        return explicit
    r = pool.rollout
    if r.checkpoint is None or r.drain_grace_seconds is None:
        return DEFAULT_KARPENTER_GRACE
    return f"{r.checkpoint.interval_minutes * 60 + r.drain_grace_seconds}s"


def checkpoint_percentages(step: int) -> list[int]:
    """Instance refresh checkpoints every `step` percent, ending at 100 (unique and ascending, as AWS requires)."""
    points = list(range(step, 100, step))
    return [*points, 100]
