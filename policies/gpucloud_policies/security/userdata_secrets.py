"""GC-SEC-012 lt-no-secrets-in-userdata: user data holds no credentials (it is readable from IMDS and the API).

The user data judged is the one each pool boots with, from the fleet model (``gpucloud.fleet``: node groups and
ASGs through their launch template or configuration, instances, spot requests, fleets, Karpenter NodePools
through their EC2NodeClass), plus that of launch templates and configurations no pool of the plan uses. The
secret reader (readers/secrets.py) decodes it first: base64 (nested), gzip, MIME multi-part and cloud-init
``write_files``, and knows the vendors' token formats. A high-entropy value without a known format is only a
warning, reported by ``secrets-high-entropy``.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, mark_undecided
from ..readers import secrets
from ..secret_sources import LAUNCH_CONFIG, fleet_types, plan_user_data


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    for v in plan_user_data(args.resources):
        if not v.known:
            mark_undecided(v.urn, v.field, "the user data is computed, so its contents are unknown at preview")
            continue
        found = secrets.tokens(v.value)
        if found:
            report(
                v.urn,
                f"{v.field} contains {secrets.describe(found)}; user data is readable by anyone who can describe "
                "the instance or reach IMDS from it. Fix: rotate the credential and read it at boot from Secrets "
                "Manager / SSM Parameter Store with the node role.",
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-012",
    name="lt-no-secrets-in-userdata",
    description="User data must not contain credentials or private keys, however it is encoded (base64, gzip, "
    "MIME multi-part, cloud-init write_files), on any launch path.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Remove the secret from user data, rotate it, and fetch it at boot from Secrets Manager or "
    "SSM Parameter Store.",
    references=("CKV_AWS_46", "AWS-0029", "AWS-0129", "AWS-0122", "gitleaks v8.30.1 rules"),
    kind="stack",
    surfaces=frozenset({"secrets"}),
    reads=frozenset({*fleet_types(), T.LAUNCH_TEMPLATE, LAUNCH_CONFIG, *T.EC2_NODE_CLASSES}),
    validate=validate,
)
