"""GC-SEC-002 eks-secrets-cmk: Kubernetes secrets are envelope-encrypted with a KMS key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, maps, strings
from ..readers import keys

CLUSTER = T.EKS_CLUSTER


def validate(args: Any, report: Report, cfg: Config) -> None:
    enc = get(args.props, "encryptionConfig")
    configs = [enc] if isinstance(enc, Mapping) else maps(enc)
    ok = any(
        "secrets" in strings(get(c, "resources")) and keys.customer_managed(get(c, "provider"), "keyArn")
        for c in configs
    )
    if not ok:
        report(
            "encryptionConfig does not encrypt 'secrets' with a KMS key (provider.keyArn). Fix: set "
            "encryption_config={'resources': ['secrets'], 'provider': {'key_arn': key.arn}}."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-002",
    name="eks-secrets-cmk",
    description="EKS secrets must be encrypted with a customer-managed KMS key.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Create an aws.kms.Key with rotation and pass it as encryptionConfig.provider.keyArn with "
    "resources ['secrets'].",
    references=("CKV_AWS_58", "AWS-0039", "SH EKS.3", "CT.EKS.PR.2"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({CLUSTER}),
    validate=validate,
)
