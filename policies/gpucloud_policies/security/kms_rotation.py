"""GC-SEC-028 kms-key-rotation: customer-managed symmetric KMS keys rotate automatically.

Fields from the pulumi-aws 7.51 input type ``aws.kms.KeyArgs``: ``enable_key_rotation`` (default false),
``rotation_period_in_days`` (90-2560, AWS default 365), ``customer_master_key_spec`` and ``key_usage``. AWS KMS
rotates only symmetric encryption keys (spec ``SYMMETRIC_DEFAULT``, usage ``ENCRYPT_DECRYPT``); asymmetric and
HMAC keys cannot rotate (AWS KMS developer guide, "Rotating AWS KMS keys"), so they are not flagged.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, integer, text, truthy

KEY = T.KMS_KEY


def validate(args: Any, report: Report, cfg: Config) -> None:
    spec = text(get(args.props, "customerMasterKeySpec"), "SYMMETRIC_DEFAULT")
    usage = text(get(args.props, "keyUsage"), "ENCRYPT_DECRYPT")
    if spec != "SYMMETRIC_DEFAULT" or usage != "ENCRYPT_DECRYPT":
        return
    if not truthy(get(args.props, "enableKeyRotation")):
        report(
            "enableKeyRotation is not true: the key material never changes. Fix: set enable_key_rotation=True "
            "(and rotation_period_in_days if a shorter period is required)."
        )
        return
    days = integer(get(args.props, "rotationPeriodInDays"), 365)
    limit = int(cfg["maxRotationPeriodDays"])
    if days is not None and days > limit:
        report(f"rotationPeriodInDays {days} exceeds {limit}. Fix: set rotation_period_in_days <= {limit}.")


GUARDRAIL = Guardrail(
    id="GC-SEC-028",
    name="kms-key-rotation",
    description="Customer-managed symmetric KMS keys must have automatic rotation enabled.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set enableKeyRotation=True on aws.kms.Key (optionally rotationPeriodInDays).",
    references=("CKV_AWS_7", "AWS-0065", "SH KMS.4"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({KEY}),
    validate=validate,
    config={
        "maxRotationPeriodDays": {
            "type": "integer",
            "minimum": 90,
            "maximum": 2560,
            "default": 365,
            "description": "Longest rotation period allowed (AWS default 365).",
        },
    },
)
