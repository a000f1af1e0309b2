"""GC-GPU-032 gpu-count-cap: GPUs per pool (max size x GPUs per instance) and per stack stay under a cap;
Karpenter NodePools must bound their GPUs with spec.limits["nvidia.com/gpu"].

A pool is anything pools.py knows to start nodes (node groups, ASGs, EC2 Fleets, Spot Fleets, instances, spot
requests, capacity reservations), and what other services start (services.py: Batch by its vCPU limit, SageMaker,
EMR, Image Builder, infrastructure templates); a requirement set counts with the largest GPU count it admits. An
ASG grows as far as its scheduled actions (autoscaling.Schedule) set it, when that is beyond its own maxSize."""

from __future__ import annotations

import math
from typing import Any

from gpucloud.fleet.types import AUTOSCALING_GROUP
from gpucloud.fleet.values import quantity

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    deciding,
    get,
    integer,
    keys,
    mark_undecided,
    text,
)
from ..capacity import GPU_RESOURCE, NODE_POOLS, nodepool_is_gpu
from ..pools import POOL_RESOURCES, pools
from ..services import SERVICE_TYPES, capacity
from ..stack import linked, of_type

ASG = AUTOSCALING_GROUP
SCHEDULE = "aws:autoscaling/schedule:Schedule"


def _service_gpus(r: Any) -> int | None:
    """GPUs one service resource can start (services.py), or None (marked undecided) when a GPU type's count is
    not modelled."""
    total = 0
    for c in capacity(r.resource_type, r.props):
        n = c.max_gpus()
        if n is None:
            mark_undecided(
                r.urn,
                c.path,
                f"'{c.instance_type}' is a GPU type, but how many instances this {r.resource_type} resource "
                "starts is not modelled",
            )
            return None
        total += n
    return total


def _scheduled(resources: Any) -> dict[str, tuple[int, str]]:
    """ASG URN -> (the largest size a scheduled action sets it to, that action's URN). An action names its group
    by ``autoscalingGroupName``: the group it depends on, or the one of that literal name; an action on a group
    the plan does not show is undecided (its instance types are not in the plan). ``-1`` leaves a size as it is
    (pulumi-aws autoscaling.Schedule)."""
    groups = list(of_type(resources, ASG))
    by_name = {text(get(g.props, "name")): g for g in groups if text(get(g.props, "name"))}
    out: dict[str, tuple[int, str]] = {}
    for s in of_type(resources, SCHEDULE):
        with deciding(s):
            size = max(integer(get(s.props, key)) or 0 for key in ("maxSize", "desiredCapacity"))
            targets = linked(s, "autoscalingGroupName", ASG)
            if not targets:
                named = by_name.get(text(get(s.props, "autoscalingGroupName")))
                targets = [named] if named is not None else []
            if not targets:
                mark_undecided(s.urn, "autoscalingGroupName", "the scheduled action's group is not in this plan")
            for g in targets:
                if size > out.get(g.urn, (-1, ""))[0]:
                    out[g.urn] = (size, s.urn)
    return out


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    per_pool = int(cfg["maxGpusPerPool"])
    per_stack = int(cfg["maxGpusPerStack"])
    total = 0
    largest = ""
    biggest = -1
    scheduled = _scheduled(args.resources)
    for pool in pools(args.resources):
        with deciding(pool.resource):
            n = pool.known().max_gpus
            by_schedule = scheduled.get(pool.resource.urn)
            if by_schedule is not None and by_schedule[0] * pool.gpus_per_node > n:
                # A scheduled action raises the group's size beyond its own maxSize: that is how far it grows.
                n = by_schedule[0] * pool.gpus_per_node
                if n > per_pool:
                    report(
                        by_schedule[1],
                        f"sets its group to {by_schedule[0]} instances ({n} GPUs at {pool.gpus_per_node} per "
                        f"instance), above the per-pool cap of {per_pool}. Fix: lower the scheduled size to "
                        f"{per_pool // max(pool.gpus_per_node, 1)} or raise maxGpusPerPool.",
                    )
                total += n
                if n > biggest:
                    largest, biggest = by_schedule[1], n
                continue
            total += n
            if n > biggest:
                largest, biggest = pool.resource.urn, n
            if n > per_pool:
                report(
                    pool.resource.urn,
                    f"can grow to {n} GPUs (max size {pool.max_size} x {pool.gpus_per_node} GPUs per instance), "
                    f"above the per-pool cap of {per_pool}. Fix: lower the max size to "
                    f"{per_pool // max(pool.gpus_per_node, 1)} or raise maxGpusPerPool in this environment's "
                    "policy config.",
                )
    for np in of_type(args.resources, *NODE_POOLS):
        with deciding(np):
            limits = get(np.props, "spec", "limits")
            if GPU_RESOURCE not in keys(limits):
                if nodepool_is_gpu(np.props):
                    report(
                        np.urn,
                        f'GPU NodePool has no spec.limits["{GPU_RESOURCE}"], so Karpenter can add GPUs without '
                        f'bound. Fix: set spec.limits["{GPU_RESOURCE}"] (at most {per_pool}).',
                    )
                continue
            # A quantity, by apimachinery's grammar: "1k" is 1,000 GPUs, not 0.
            raw = limits[GPU_RESOURCE]
            parsed = quantity(raw)
            n = math.ceil(parsed) if parsed is not None and parsed > 0 else 0
            total += n
            if n > biggest:
                largest, biggest = np.urn, n
            if n > per_pool:
                report(
                    np.urn,
                    f'spec.limits["{GPU_RESOURCE}"] is {n}, above the per-pool cap of {per_pool}. Fix: lower it.',
                )
    for r in of_type(args.resources, *SERVICE_TYPES):
        with deciding(r):
            found = _service_gpus(r)
            if found is None:
                continue
            total += found
            if found > biggest:
                largest, biggest = r.urn, found
            if found > per_pool:
                report(
                    r.urn,
                    f"can start {found} GPUs ({r.resource_type}: instance counts x GPUs per instance), above the "
                    f"per-pool cap of {per_pool}. Fix: lower its instance counts or vCPU limit, or raise "
                    "maxGpusPerPool in this environment's policy config.",
                )
    if total > per_stack:
        report(
            largest,
            f"the stack can grow to {total} GPUs in all, above maxGpusPerStack {per_stack}. Fix: lower pool max "
            "sizes (this pool is the largest) or raise maxGpusPerStack in this environment's policy config.",
        )


GUARDRAIL = Guardrail(
    id="GC-GPU-032",
    name="gpu-count-cap",
    description="GPU pools and the stack must stay under their GPU count caps; NodePools must set a GPU limit.",
    category="gpu",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Lower scalingConfig.maxSize / ASG maxSize, set spec.limits['nvidia.com/gpu'] on every GPU "
    "NodePool, or raise maxGpusPerPool / maxGpusPerStack through a reviewed config change.",
    references=("gpucloud guardrails rule 32",),
    kind="stack",
    surfaces=frozenset({"compute"}),
    reads=frozenset({*POOL_RESOURCES, *NODE_POOLS, *SERVICE_TYPES, SCHEDULE}),
    validate=validate,
    config={
        "maxGpusPerPool": {"type": "integer", "minimum": 0, "default": 64, "description": "GPUs one pool may reach."},
        "maxGpusPerStack": {
            "type": "integer",
            "minimum": 0,
            "default": 256,
            "description": "GPUs all pools of the stack may reach together.",
        },
    },
)
