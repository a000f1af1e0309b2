"""GC-SEC-143 cloudtrail-hardened: trails validate their log files, encrypt them with a CMK and cover every region.

Fields from the pulumi-aws 7.51 input type ``aws.cloudtrail.TrailArgs``: ``enable_log_file_validation``
(default false: without digest files a tampered log cannot be detected), ``kms_key_id`` (without it logs use
SSE-S3 only) and ``is_multi_region_trail`` (default false: activity in other regions goes unrecorded).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, present, truthy

TRAIL = "aws:cloudtrail/trail:Trail"


def validate(args: Any, report: Report, cfg: Config) -> None:
    p = args.props
    if not truthy(get(p, "enableLogFileValidation")):
        report(
            "enableLogFileValidation is not true: tampering with the logs cannot be detected. Fix: set "
            "enable_log_file_validation=True."
        )
    if cfg["requireKmsKey"] and not present(p, "kmsKeyId"):
        report("kmsKeyId is not set: logs are encrypted with SSE-S3 only. Fix: set kms_key_id to a KMS key ARN.")
    if cfg["requireMultiRegion"] and not truthy(get(p, "isMultiRegionTrail")):
        report(
            "isMultiRegionTrail is not true: API activity in other regions is not recorded. Fix: set "
            "is_multi_region_trail=True."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-143",
    name="cloudtrail-hardened",
    description="CloudTrail trails must validate log files, use a KMS key and be multi-region.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set enableLogFileValidation, kmsKeyId and isMultiRegionTrail on aws.cloudtrail.Trail.",
    references=(
        "CKV_AWS_36",
        "CKV_AWS_35",
        "CKV_AWS_67",
        "AWS-0016",
        "AWS-0015",
        "AWS-0014",
        "SH CloudTrail.1",
        "SH CloudTrail.2",
        "SH CloudTrail.4",
    ),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({TRAIL}),
    validate=validate,
    config={
        "requireKmsKey": {"type": "boolean", "default": True, "description": "Require kmsKeyId."},
        "requireMultiRegion": {"type": "boolean", "default": True, "description": "Require isMultiRegionTrail."},
    },
)
