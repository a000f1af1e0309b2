"""GC-GPU-032 gpu-count-cap: GPUs per pool (max size x GPUs per instance) and per stack stay under a cap;
Karpenter NodePools must bound their GPUs with spec.limits["nvidia.com/gpu"].

A pool is anything pools.py knows to start nodes (node groups, ASGs, EC2 Fleets, Spot Fleets, instances, spot
requests, capacity reservations), and what other services start (services.py: Batch by its vCPU limit, SageMaker,
EMR, Image Builder, infrastructure templates); a requirement set counts with the largest GPU count it admits."""

from __future__ import annotations

import math
from typing import Any

from gpucloud.fleet.values import quantity

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    deciding,
    get,
    keys,
    mark_undecided,
)
from ..capacity import GPU_RESOURCE, NODE_POOLS, nodepool_is_gpu
from ..pools import POOL_RESOURCES, pools
from ..services import SERVICE_TYPES, capacity
from ..stack import of_type


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


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    per_pool = int(cfg["maxGpusPerPool"])
    per_stack = int(cfg["maxGpusPerStack"])
    total = 0
    largest = ""
    biggest = -1
    for pool in pools(args.resources):
        with deciding(pool.resource):
            n = pool.known().max_gpus
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
    reads=frozenset({*POOL_RESOURCES, *NODE_POOLS, *SERVICE_TYPES}),
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
