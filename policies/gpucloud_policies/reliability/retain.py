"""GC-REL-101 data-retain-on-delete: data stores survive `pulumi destroy` and accidental replacement.

CrossGuard 1.21 shows policies ``protect`` but not ``retainOnDelete``; gpucloud's offline evaluator passes
both. In the Pulumi CLI an unprotected store is therefore reported as "can't run policy" (not decidable)
rather than passed or failed.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, text, unknown

STORES = T.DATA_STORES


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.name in set(cfg["exemptResources"]):
        return
    if cfg["exemptScratch"] and text(get(args.props, "deploymentType")).startswith("SCRATCH"):
        return
    if getattr(args.opts, "protect", False):
        return
    retain = getattr(args.opts, "retain_on_delete", None)
    if retain is None:
        raise unknown("options.retainOnDelete")
    if not retain:
        report(
            "neither retain_on_delete nor protect is set: `pulumi destroy` or a replacement deletes the data. "
            "Fix: pass ResourceOptions(retain_on_delete=True) (and protect=True in prod), or list the resource "
            "under exemptResources if it holds nothing worth keeping."
        )


GUARDRAIL = Guardrail(
    id="GC-REL-101",
    name="data-retain-on-delete",
    description="Data stores (buckets, file systems, volumes) must be retained on delete or protected.",
    category="reliability",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set retain_on_delete=True (and protect=True in prod) on buckets, FSx and EFS file systems "
    "and EBS volumes; gpucloud components do this unless the spec's deletion flag is set.",
    references=("gpucloud design principle 4",),
    kind="resource",
    resource_types=STORES,
    validate=validate,
    config={
        "exemptResources": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Resource names allowed to be deleted with the stack.",
        },
        "exemptScratch": {
            "type": "boolean",
            "default": True,
            "description": "Skip SCRATCH FSx file systems (their data is transient by design).",
        },
    },
)
