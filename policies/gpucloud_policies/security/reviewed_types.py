"""GC-SEC-149 reviewed-types-only: every resource is of a type someone reviewed; what the pack cannot see fails closed.

A guardrail judges only the types it reads, so a type nobody reviewed (another provider's resource, a custom
resource no guardrail names, a type a provider upgrade added) passes every other policy unseen. Reviewed means
triaged in the surface inventory: every pulumi-aws / pulumi-kubernetes type the installed SDKs define (each of its
guarded surfaces read by a guardrail or listed out of scope with a reason, which tests/policies/test_coverage.py
holds), the custom kinds reviewed by hand in scope.json, the types a guardrail names, and this environment's
``reviewedTypes``. Beyond that, a resource that sets an input of a surface in ``unreadSurfaces`` which no
guardrail reads yet (a SageMaker space starting GPU instances, say) is unreviewed too.

A component (a resource with children) is judged through its children. A component the plan shows without any
(a multi-language component without an expansion model, whose children only its provider knows) hides what it
creates: it is undecided, under this policy's ``unknowns`` setting, like any value the plan cannot see.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import coverage
from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, mark_undecided, present

# Engine-internal types: the stack and provider resources configure, they create nothing a policy judges.
_INTERNAL = "pulumi:"


@functools.cache
def _reviewed(token: str, extra: tuple[str, ...]) -> bool:
    return coverage.triaged(token) or coverage.matches(token, extra)


def _unread_set(props: Any, token: str, surfaces: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(s, root) for s, root in coverage.unread_roots(token, surfaces) if present(props, root)]


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    extra = tuple(str(t) for t in cfg["reviewedTypes"])
    surfaces = tuple(str(s) for s in cfg["unreadSurfaces"])
    resources = [r for r in args.resources if not r.resource_type.startswith(_INTERNAL)]
    parents = {r.parent.urn for r in resources if getattr(r, "parent", None) is not None}
    for r in resources:
        token = r.resource_type
        if _reviewed(token, extra):
            used = _unread_set(r.props, token, surfaces) if surfaces and not coverage.matches(token, extra) else []
            if used:
                where = ", ".join(f"{root} ({s})" for s, root in used)
                report(
                    r.urn,
                    f"{token} sets {where}, a surface no guardrail reads yet, so what it starts or exposes is not "
                    "judged. Fix: use a path the guardrails read (an EKS node group, ASG or Karpenter NodePool), "
                    "or after review list the type in reviewedTypes for this environment.",
                )
            continue
        if r.urn in parents:
            continue  # a component: its children are judged, each by its own type
        if getattr(getattr(r, "opts", None), "custom", None) is False:
            mark_undecided(
                r.urn,
                "children",
                f"component {token} registered no children the plan can see (a multi-language component without "
                "an expansion model): what it creates is not judged",
            )
            continue
        report(
            r.urn,
            f"type {token} is not reviewed: no guardrail reads it and the surface inventory of the installed "
            "provider SDKs does not list it, so nothing here judges what it creates. Fix: use a reviewed type, "
            "or review it and add it to reviewedTypes in this environment's policy config (or to the pack's "
            "scope table, policies/gpucloud_policies/scope.json, with the reason).",
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-149",
    name="reviewed-types-only",
    description="Every resource is of a reviewed type; components whose children the plan cannot see are undecided.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Use resource types the surface inventory lists and the guardrails read; review a new type "
    "(its surfaces read by a guardrail or out of scope with a reason) before adding it to reviewedTypes; give a "
    "multi-language component an expansion model or create its children directly.",
    references=("gpucloud surface inventory (gpucloud/surface/inventory.json)",),
    kind="stack",
    validate=validate,
    config={
        "reviewedTypes": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Type tokens (or fnmatch patterns) reviewed for this environment beyond the inventory.",
        },
        "unreadSurfaces": {
            "type": "array",
            "items": {"enum": ["compute", "network", "principal", "iam", "data", "secrets", "pods"]},
            "default": ["compute"],
            "description": "Surfaces that no guardrail reads yet on a type which make a resource using them "
            "unreviewed (the inventory's surface ids).",
        },
    },
)
