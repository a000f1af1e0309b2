"""GC-GPU-102 deprecated-accelerators: V100, K80, M60 and other old accelerators (advisory unless configured)."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity
from ..capacity import CAPACITY_TYPES, choices, family, spec


def _why(instance_type: str, extra: set[str]) -> str | None:
    s = spec(instance_type)
    if s is not None and s.deprecated:
        return s.accelerator
    if family(instance_type) in extra:
        return f"family {family(instance_type)}"
    return None


def validate(args: Any, report: Report, cfg: Config) -> None:
    extra = set(cfg["extraDeprecatedFamilies"])
    for c in choices(args.resource_type, args.props):
        if c.via:
            for fam in c.families:
                why = next((w for t in c.instance_types if family(t) == fam and (w := _why(t, extra))), None)
                if why:
                    report(f"{c.path} ({c.via}) admits deprecated {why}. Fix: exclude family '{fam}'.")
            continue
        t = c.instance_types[0]
        why = _why(t, extra)
        if why:
            report(
                f"{c.path} '{t}' uses a deprecated accelerator ({why}): poor price/performance "
                "and no current CUDA support guarantees. Fix: move to a current family (g6e, p4de, p5)."
            )


GUARDRAIL = Guardrail(
    id="GC-GPU-102",
    name="deprecated-accelerators",
    description="Deprecated accelerators (V100, K80, M60 ...) should not be provisioned.",
    category="gpu",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Replace the type with a current-generation family; set this policy's enforcementLevel to "
    "mandatory to deny deprecated accelerators outright.",
    references=("gpucloud catalog (deprecated flag)",),
    kind="resource",
    resource_types=CAPACITY_TYPES,
    surfaces=frozenset({"compute"}),
    validate=validate,
    config={
        "extraDeprecatedFamilies": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["p2", "g2", "g3", "g3s"],
            "description": "Families treated as deprecated in addition to the catalog's flag (K80, K520, M60).",
        },
    },
)
