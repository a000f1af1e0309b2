"""GC-GPU-101 gpu-min-memory: training pools need enough GPU memory per accelerator."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity
from ..capacity import CAPACITY_TYPES, choices, family, is_training, spec, workload
from .common import WORKLOAD_LABEL_KEYS


def validate(args: Any, report: Report, cfg: Config) -> None:
    kind = workload(args.resource_type, args.props, list(cfg["workloadLabelKeys"]))
    if not is_training(kind, set(cfg["workloads"])):
        return
    minimum = float(cfg["minGpuMemoryGib"])
    for c in choices(args.resource_type, args.props):
        small = [
            s
            for t in c.instance_types
            if (s := spec(t)) is not None and s.accelerator_count and s.accelerator_memory_gib < minimum
        ]
        if c.via:
            for fam in sorted({s.family for s in small}):
                s = next(x for x in small if family(x.instance_type) == fam)
                report(
                    f"{c.path} ({c.via}) admits family '{fam}' ({s.accelerator}, {s.accelerator_memory_gib:g} GiB "
                    f"per accelerator), below the {minimum:g} GiB minimum for {kind} pools. Fix: constrain it to "
                    "families with more GPU memory."
                )
            continue
        for s in small:
            report(
                f"{c.path} '{s.instance_type}' has {s.accelerator_memory_gib:g} GiB per {s.accelerator}, below "
                f"the {minimum:g} GiB minimum for {kind} pools. Fix: choose a type with at least {minimum:g} GiB "
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
    resource_types=CAPACITY_TYPES,
    surfaces=frozenset({"compute"}),
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
