"""GC-GPU-101 gpu-min-memory: training pools need enough GPU memory per accelerator."""

from __future__ import annotations

from typing import Any

from gpucloud import catalog

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity
from ..capacity import ASG, LAUNCH_TEMPLATE, NODE_GROUP, NODE_POOL, nodepool_families, spec, type_refs, workload
from .common import WORKLOAD_LABEL_KEYS


def validate(args: Any, report: Report, cfg: Config) -> None:
    if workload(args.resource_type, args.props, list(cfg["workloadLabelKeys"])) not in set(cfg["workloads"]):
        return
    minimum = float(cfg["minGpuMemoryGib"])
    if args.resource_type == NODE_POOL:
        fams, key = nodepool_families(args.props)
        for fam in sorted(fams or ()):
            small = [s for s in catalog.get_catalog() if s.family == fam and s.accelerator_memory_gib < minimum]
            if small:
                report(
                    f"requirement {key} allows family '{fam}' ({small[0].accelerator}, "
                    f"{small[0].accelerator_memory_gib:g} GiB per accelerator), below the {minimum:g} GiB minimum "
                    "for training. Fix: constrain the NodePool to families with more GPU memory."
                )
        return
    for ref in type_refs(args.resource_type, args.props):
        s = spec(ref.instance_type)
        if s is not None and s.accelerator_count and s.accelerator_memory_gib < minimum:
            report(
                f"{ref.path} '{ref.instance_type}' has {s.accelerator_memory_gib:g} GiB per {s.accelerator}, below "
                f"the {minimum:g} GiB minimum for training pools. Fix: choose a type with at least {minimum:g} GiB "
                "per accelerator (e.g. g6e, p4de, p5) or lower minGpuMemoryGib for this environment."
            )


GUARDRAIL = Guardrail(
    id="GC-GPU-101",
    name="gpu-min-memory",
    description="Training pools must meet the minimum GPU memory per accelerator.",
    category="gpu",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Pick instance types whose per-accelerator memory meets minGpuMemoryGib (catalog "
    "accelerator_memory_gib), or mark the pool with a non-training workload label if it does not train.",
    references=("gpucloud catalog",),
    kind="resource",
    resource_types=frozenset({NODE_GROUP, ASG, LAUNCH_TEMPLATE, NODE_POOL}),
    validate=validate,
    config={
        "minGpuMemoryGib": {
            "type": "number",
            "minimum": 0,
            "default": 24,
            "description": "Minimum memory per accelerator (GiB) for training pools.",
        },
        "workloads": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["training"],
            "description": "Workload label values the minimum applies to.",
        },
        "workloadLabelKeys": WORKLOAD_LABEL_KEYS,
    },
)
