"""Drain timing: can a pool's drained pods finish their emergency checkpoint before the node goes?

A pool's drain grace comes from its checkpoint model (`rollout.checkpoint` in the platform spec: the write plus
the margin, gpucloud/spec/pools.py). Two clocks outside gpucloud bound it:

- `rollout.spot-notice`: a Spot Instance gets a two-minute interruption notice, then EC2 reclaims it (EC2 User
  Guide, "Spot Instance interruption notices": "a warning that is issued two minutes before Amazon EC2 stops or
  terminates your Spot Instance"). A drain grace above 120 s on a pool that may run on spot cannot be honoured:
  the instance is gone before the checkpoint is written.
- `rollout.managed-drain-limit`: EKS drains a managed node group's node for an update itself and, unless the
  update is forced, fails it when pods do not leave the node within 15 minutes (EKS User Guide, "Managed node
  update behavior", upgrade phase: PodEvictionFailure). A drain grace above 900 s on a managed pool fails every
  update that meets a busy node.

Both are warnings: the grace is the ceiling a pod may use, and a job that writes faster than its declared
`writeSeconds` still makes it. The pools are the plan's (fleet model: market, launch path, gpucloud.io/pool
mark); the checkpoint model is the stack's `gpucloud:platform` spec. A plan without that spec is not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.fleet import labels as L
from gpucloud.fleet import model as M
from gpucloud.fleet.build import pools as fleet_pools
from gpucloud.spec import SpecError, parse_platform

if TYPE_CHECKING:
    from gpucloud.spec.pools import NodePoolSpec

SPOT_NOTICE_SECONDS = 120
SPOT_NOTICE_DOCS = (
    "EC2 User Guide, Spot Instance interruption notices: issued two minutes before EC2 stops or terminates the "
    "instance (docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html)"
)
MANAGED_DRAIN_LIMIT_SECONDS = 15 * 60
MANAGED_DRAIN_DOCS = (
    "EKS User Guide, Managed node update behavior: an update that is not forced fails when pods do not leave the "
    "node within 15 minutes (docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html)"
)
PLATFORM_KEY = "gpucloud:platform"


def _spec_pools(ctx: ConformanceContext) -> dict[str, tuple[int, NodePoolSpec]]:
    """Pool name -> (its index in the spec, its spec), for the pools that declare a checkpoint model."""
    data = ctx.plan.config.get(PLATFORM_KEY)
    if not isinstance(data, dict):
        return {}
    try:
        spec = parse_platform(data, f"stack '{ctx.plan.stack}'", ctx.plan.config.get("aws:region"))
    except SpecError:
        return {}  # the program itself reports a bad spec
    return {p.name: (i, p) for i, p in enumerate(spec.node_pools) if p.rollout.checkpoint is not None}


def _pool_name(pool: M.Pool) -> Any:
    if L.POOL in pool.labels:
        return pool.labels[L.POOL]
    return next((m[L.POOL] for m in pool.marks if L.POOL in m), None)


def _model(spec: NodePoolSpec) -> str:
    c = spec.rollout.checkpoint
    assert c is not None and spec.rollout.drain_grace_seconds is not None
    return (
        f"checkpoint model (intervalMinutes {c.interval_minutes}, writeSeconds {c.write_seconds}) gives a drain "
        f"grace of {spec.rollout.drain_grace_seconds} s"
    )


def _drain_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    declared = _spec_pools(ctx)
    if not declared:
        return
    region = ctx.plan.config.get("aws:region")
    for pool in fleet_pools(ctx.plan.resources, region=region if isinstance(region, str) else None):
        name = _pool_name(pool)
        if name not in declared:
            continue
        index, spec = declared[name]
        grace, checkpoint = spec.rollout.drain_grace_seconds, spec.rollout.checkpoint
        assert grace is not None and checkpoint is not None
        field = f"{PLATFORM_KEY}.nodePools[{index}].rollout.checkpoint"
        if M.SPOT in pool.markets and grace > SPOT_NOTICE_SECONDS:
            yield Finding(
                "rollout.spot-notice",
                "warning",
                pool.urn,
                field,
                f"pool {name} may run on spot, and its {_model(spec)}: the emergency checkpoint cannot be written "
                f"in the {SPOT_NOTICE_SECONDS} s between the interruption notice and the reclaim",
                f"a drain grace of at most {SPOT_NOTICE_SECONDS} s (writeSeconds at most "
                f"{SPOT_NOTICE_SECONDS - (grace - checkpoint.write_seconds)}): checkpoint more often "
                "so that one write is smaller, or keep the pool off spot",
                SPOT_NOTICE_DOCS,
            )
        if pool.path == M.MANAGED and grace > MANAGED_DRAIN_LIMIT_SECONDS:
            yield Finding(
                "rollout.managed-drain-limit",
                "warning",
                pool.urn,
                field,
                f"pool {name} is a managed node group, and its {_model(spec)}: a pod still writing after "
                f"{MANAGED_DRAIN_LIMIT_SECONDS // 60} minutes fails the node group update (PodEvictionFailure)",
                f"a drain grace under {MANAGED_DRAIN_LIMIT_SECONDS} s, or the self-managed or Karpenter backend "
                "(their drains wait as long as the pool's grace)",
                MANAGED_DRAIN_DOCS,
            )


@register_check("rollout")
def check_rollout(ctx: ConformanceContext) -> Iterator[Finding]:
    from gpucloud.conformance.scheduling import guarded

    yield from guarded(ctx, "rollout", "drain timing", lambda: _drain_findings(ctx))
