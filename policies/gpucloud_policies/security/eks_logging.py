"""GC-SEC-003 eks-control-plane-logging: audit and authenticator logs are on."""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, strings

CLUSTER = T.EKS_CLUSTER


def validate(args: Any, report: Report, cfg: Config) -> None:
    enabled = set(strings(get(args.props, "enabledClusterLogTypes")))
    missing = [t for t in cfg["requiredLogTypes"] if t not in enabled]
    if missing:
        report(
            f"enabledClusterLogTypes lacks {missing}. Fix: add them to enabled_cluster_log_types "
            "(and a KMS-encrypted /aws/eks/<name>/cluster log group with retention)."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-003",
    name="eks-control-plane-logging",
    description="EKS control-plane logging must include the audit and authenticator logs.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set enabledClusterLogTypes to include audit and authenticator (all five is better).",
    references=("CKV_AWS_37", "AWS-0038", "SH EKS.8"),
    kind="resource",
    resource_types=frozenset({CLUSTER}),
    validate=validate,
    config={
        "requiredLogTypes": {
            "type": "array",
            "items": {"enum": ["api", "audit", "authenticator", "controllerManager", "scheduler"]},
            "default": ["audit", "authenticator"],
            "description": "Control-plane log types that must be enabled.",
        },
    },
)
