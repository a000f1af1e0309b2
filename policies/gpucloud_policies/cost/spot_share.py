"""GC-COST-034 nonprod-spot-share: in dev and staging, a minimum share of GPU capacity is spot."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, integer, keys
from ..capacity import GPU_RESOURCE, NODE_POOLS, SPOT, markets
from ..pools import pools
from ..stack import of_type


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    total = spot = 0
    anchor, anchor_gpus = "", -1
    # Each pool adds to the totals only once all its values are known; an undecided pool is listed instead.
    for pool in pools(args.resources):
        with deciding(pool.resource):
            if not pool.known().is_gpu:
                continue
            n, s = pool.max_gpus, pool.spot_gpus
            total, spot = total + n, spot + s
            if n - s > anchor_gpus:
                anchor, anchor_gpus = pool.resource.urn, n - s
    for np in of_type(args.resources, *NODE_POOLS):
        with deciding(np):
            limits = get(np.props, "spec", "limits")
            if GPU_RESOURCE not in keys(limits):
                continue
            n = integer(limits[GPU_RESOURCE], 0) or 0
            s = n if SPOT in markets(np.resource_type, np.props) else 0
            total, spot = total + n, spot + s
            if n - s > anchor_gpus:
                anchor, anchor_gpus = np.urn, n - s
    minimum = float(cfg["minSpotPercent"])
    if total and spot * 100 < minimum * total:
        report(
            anchor,
            f"only {spot} of {total} GPUs at maximum size ({100 * spot / total:.0f}%) can run on spot, "
            f"below {minimum:g}% for a non-prod environment. Fix: move pools (this one has the most on-demand "
            "GPUs) to spot (capacityType SPOT, onDemandPercentageAboveBaseCapacity < 100, or a Karpenter "
            "capacity-type requirement including spot).",
        )


GUARDRAIL = Guardrail(
    id="GC-COST-034",
    name="nonprod-spot-share",
    description="In non-prod environments at least minSpotPercent of GPU capacity (at max size) must be spot.",
    category="cost",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Use spot for interruptible non-prod GPU work; disable this policy in prod's config.",
    references=("gpucloud guardrails rule 34",),
    kind="stack",
    validate=validate,
    config={
        "minSpotPercent": {
            "type": "number",
            "minimum": 0,
            "maximum": 100,
            "default": 50,
            "description": "Minimum spot share of GPU capacity at maximum size, in percent.",
        },
    },
)
