"""GC-SEC-145 ebs-encryption-by-default: the account-level EBS default encryption is never switched off.

Field from the pulumi-aws 7.51 input type ``aws.ebs.EncryptionByDefaultArgs``: ``enabled`` (default true). The
resource exists to turn the setting on; one that sets it false makes every volume created without an explicit
``encrypted`` (by any tool in the region) unencrypted.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, falsy, get

ENCRYPTION_BY_DEFAULT = "aws:ebs/encryptionByDefault:EncryptionByDefault"


def validate(args: Any, report: Report, cfg: Config) -> None:
    if falsy(get(args.props, "enabled")):
        report(
            "enabled is false: new EBS volumes in this region are unencrypted unless each asks. Fix: set "
            "enabled=True (or remove the resource's enabled argument)."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-145",
    name="ebs-encryption-by-default",
    description="aws.ebs.EncryptionByDefault must not disable default EBS encryption.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set enabled=True on aws.ebs.EncryptionByDefault (and an aws.ebs.DefaultKmsKey).",
    references=("CKV_AWS_106", "SH EC2.7", "AWS-0131"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({ENCRYPTION_BY_DEFAULT}),
    validate=validate,
)
