"""GC-COST-037 scale-to-zero: non-prod GPU pools may scale to zero; GPU NodePools consolidate and expire."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, has, text
from ..capacity import ASG, NODE_GROUP, NODE_POOLS, choice_types, is_accelerated, min_size, nodepool_is_gpu

_GPU_AMIS = ("NVIDIA", "NEURON", "_GPU")


def _is_gpu_pool(resource_type: str, props: Any) -> bool:
    if any(is_accelerated(t) for t in choice_types(resource_type, props)):
        return True
    return resource_type == NODE_GROUP and any(k in text(get(props, "amiType")) for k in _GPU_AMIS)


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.name in set(cfg["exemptPools"]):
        return
    rt, props = args.resource_type, args.props
    if rt in NODE_POOLS:
        if not nodepool_is_gpu(props):
            return
        missing = [
            p for p in ("consolidationPolicy", "consolidateAfter") if not has(get(props, "spec", "disruption"), p)
        ]
        expire = get(props, "spec", "template", "spec", "expireAfter")
        if expire is None or text(expire) == "Never":
            missing.append("template.spec.expireAfter (finite)")
        if missing:
            report(
                f"GPU NodePool lacks spec.disruption / expiry settings {missing}, so idle GPU nodes linger. "
                "Fix: set consolidationPolicy, consolidateAfter and a finite expireAfter."
            )
        return
    if not _is_gpu_pool(rt, props):
        return
    lowest = min_size(rt, props)
    if lowest is None or lowest > 0:
        where = "scalingConfig.minSize" if rt == NODE_GROUP else "minSize"
        report(
            f"{where} is {lowest if lowest is not None else 'unset'}: idle GPU nodes cost money in a non-prod "
            f"environment. Fix: set {where} to 0 and let the autoscaler add nodes on demand."
        )


GUARDRAIL = Guardrail(
    id="GC-COST-037",
    name="scale-to-zero",
    description="Non-prod GPU pools must be able to scale to zero; GPU NodePools must consolidate and expire nodes.",
    category="cost",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Set the pool's minimum size to 0 (non-prod); on NodePools set spec.disruption."
    "consolidationPolicy, consolidateAfter and spec.template.spec.expireAfter. Disable in prod's config.",
    references=("gpucloud guardrails rule 37",),
    kind="resource",
    resource_types=frozenset({NODE_GROUP, ASG, *NODE_POOLS}),
    validate=validate,
    config={
        "exemptPools": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Resource names allowed to keep a warm floor.",
        },
    },
)
