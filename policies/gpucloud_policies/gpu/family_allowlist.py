"""GC-GPU-031 gpu-family-allowlist: accelerated instance families allowed in this environment.

Every capacity path of the one capacity reader is checked (capacity.choices): named types on node groups,
launch templates and configurations, ASG / Fleet / Spot Fleet overrides, instances, spot requests and capacity
reservations, and requirement sets (attribute-based instance requirements, Karpenter NodePool requirements of
v1 and v1beta1) resolved to the catalog types they admit; and the capacity other services start (services.py:
Batch, SageMaker, EMR, Image Builder, infrastructure templates). Per-environment lists live in
policies/configs/<env>.json (dev leaves P5 out).
"""

from __future__ import annotations

from typing import Any

from gpucloud import catalog

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity
from ..capacity import (
    CAPACITY_TYPES,
    NODE_POOLS,
    choices,
    family,
    family_is_accelerated,
    is_accelerated,
    is_valid,
    nodepool_families,
    nodepool_is_gpu,
)
from ..services import SERVICE_TYPES, capacity

DEFAULT_FAMILIES = sorted({s.family for s in catalog.get_catalog() if not s.deprecated})


def _suggestion(instance_type: str) -> str:
    try:
        catalog.validate_instance_type(instance_type)
    except catalog.UnknownInstanceType as exc:
        return str(exc)
    except Exception:
        pass
    return f"unknown instance type {instance_type!r}"


def _services(args: Any, report: Report, allowed: set[str], allowed_types: set[str], denied: set[str]) -> None:
    """Other services' capacity (services.py): only accelerated types are judged; whether a name is a valid type
    of that service is conformance's question, not this policy's."""
    shown = ", ".join(sorted(allowed)) or "none"
    seen: set[str] = set()
    for c in capacity(args.resource_type, args.props):
        t = c.instance_type
        # A template's group names the type of the template it uses: one finding per type, where it is written.
        if t in seen:
            continue
        seen.add(t)
        if t in denied:
            report(f"{c.path} '{t}' is denied by config. Fix: pick another type.")
        elif c.is_family and family_is_accelerated(t) and t not in allowed:
            report(
                f"{c.path} admits family '{t}', which is not allowed here (allowed: {shown}). Fix: name types of "
                "an allowed family, or allow the family in allowedFamilies."
            )
        elif not c.is_family and is_accelerated(t) and c.family not in allowed and t not in allowed_types:
            report(
                f"{c.path} '{t}': family '{c.family}' is not allowed in this environment (allowed: {shown}). "
                "Fix: pick a type from an allowed family, or allow the family in this environment's policy config."
            )


def validate(args: Any, report: Report, cfg: Config) -> None:
    allowed = set(cfg["allowedFamilies"])
    allowed_types = set(cfg["allowedInstanceTypes"])
    denied = set(cfg["deniedInstanceTypes"])
    shown = ", ".join(sorted(allowed)) or "none"
    if args.resource_type in SERVICE_TYPES:
        _services(args, report, allowed, allowed_types, denied)
        return
    if args.resource_type in NODE_POOLS and nodepool_families(args.props)[0] is None:
        if nodepool_is_gpu(args.props):
            report(
                "GPU NodePool does not constrain the instance family, so Karpenter may launch any GPU type. "
                f"Fix: add a requirement 'karpenter.k8s.aws/instance-family' In [{shown}]."
            )
        return
    for c in choices(args.resource_type, args.props):
        if c.via:
            for fam in [f for f in c.families if f not in allowed and family_is_accelerated(f)]:
                report(
                    f"{c.path} ({c.via}) admits family '{fam}', which is not allowed here (allowed: {shown}). "
                    "Fix: narrow the requirements to allowed families, or allow it in allowedFamilies."
                )
            continue
        t = c.instance_types[0]
        if not is_valid(t):
            report(f"{c.path}: {_suggestion(t)}. Fix: use a valid EC2 instance type name.")
        elif t in denied:
            report(f"{c.path} '{t}' is denied by config. Fix: pick another type.")
        elif is_accelerated(t) and family(t) not in allowed and t not in allowed_types:
            report(
                f"{c.path} '{t}': family '{family(t)}' is not allowed in this environment (allowed: {shown}). "
                "Fix: pick a type from an allowed family, or allow the family in this environment's policy config."
            )


GUARDRAIL = Guardrail(
    id="GC-GPU-031",
    name="gpu-family-allowlist",
    description="Accelerated instance types must come from the families allowed in this environment.",
    category="gpu",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Use an instance type from allowedFamilies (see policies/configs/<env>.json), or change the "
    "environment's allow-list through a reviewed config change. Karpenter NodePools must pin "
    "karpenter.k8s.aws/instance-family (or instance-type / instance-gpu-name) with operator In.",
    references=("compliance.tf restrict_instance_types",),
    kind="resource",
    resource_types=CAPACITY_TYPES | SERVICE_TYPES,
    surfaces=frozenset({"compute"}),
    validate=validate,
    config={
        "allowedFamilies": {
            "type": "array",
            "items": {"type": "string"},
            "default": DEFAULT_FAMILIES,
            "description": "Accelerated families (g6e, p5, trn1 ...) allowed; non-accelerated types are not checked.",
        },
        "allowedInstanceTypes": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Single types allowed even when their family is not.",
        },
        "deniedInstanceTypes": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Types refused even when their family is allowed.",
        },
    },
)
