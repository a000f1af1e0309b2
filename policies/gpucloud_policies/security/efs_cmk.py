"""GC-SEC-141 efs-encrypted-cmk: EFS file systems are encrypted at rest with a customer-managed KMS key.

Fields from the pulumi-aws 7.51 input type ``aws.efs.FileSystemArgs``: ``encrypted`` (default false: an EFS file
system created through the API is unencrypted unless asked) and ``kms_key_id`` (without it AWS uses the
AWS-managed ``aws/elasticfilesystem`` key, whose policy the account cannot restrict).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity
from .encryption import AtRest

FILE_SYSTEM = "aws:efs/fileSystem:FileSystem"
AT_REST = AtRest(
    flag="encrypted",
    unencrypted="the file system is stored unencrypted",
    flag_fix="set encrypted=True and kms_key_id to the platform's KMS key",
    aws_managed="the file system uses the AWS-managed key",
    key_fix="set kms_key_id",
)


def validate(args: Any, report: Report, cfg: Config) -> None:
    AT_REST.check(args.props, report, require_key=cfg["requireKmsKey"])


GUARDRAIL = Guardrail(
    id="GC-SEC-141",
    name="efs-encrypted-cmk",
    description="EFS file systems must be encrypted with a customer-managed KMS key.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set encrypted=True and kmsKeyId on aws.efs.FileSystem (a replacement: EFS cannot be "
    "encrypted in place).",
    references=("CKV_AWS_42", "CKV_AWS_184", "AWS-0037", "SH EFS.1"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({FILE_SYSTEM}),
    validate=validate,
    config={
        "requireKmsKey": {"type": "boolean", "default": True, "description": "Require kmsKeyId (a CMK)."},
    },
)
