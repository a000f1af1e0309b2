"""GC-SEC-018 fsx-persistent-cmk: persistent FSx for Lustre file systems use a customer-managed KMS key."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, present, text

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


def validate(args: Any, report: Report, cfg: Config) -> None:
    kind = text(get(args.props, "deploymentType"), "SCRATCH_1")
    if kind.startswith("PERSISTENT") and not present(args.props, "kmsKeyId"):
        report(
            f"deploymentType {kind} without kmsKeyId: data at rest uses the AWS-managed key. Fix: set "
            "kms_key_id to the platform's KMS key."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-018",
    name="fsx-persistent-cmk",
    description="Persistent FSx for Lustre file systems must be encrypted with a customer-managed KMS key.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set kmsKeyId on PERSISTENT_1 / PERSISTENT_2 file systems (scratch types are not checked).",
    references=("CKV_AWS_190",),
    kind="resource",
    resource_types=frozenset({LUSTRE}),
    validate=validate,
)
