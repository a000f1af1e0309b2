"""GC-SEC-009 lt-imds-hop-limit: pods cannot reach the node's metadata service (hop limit 1).

Unset counts as 2, the hop limit EKS managed node groups apply when the template does not set one.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, integer
from ..capacity import LAUNCH_TEMPLATE

UNSET_HOP_LIMIT = 2


def validate(args: Any, report: Report, cfg: Config) -> None:
    limit = 2 if args.name in set(cfg["exceptions"]) else int(cfg["maxHopLimit"])
    raw = get(args.props, "metadataOptions", "httpPutResponseHopLimit")
    hops = integer(raw, UNSET_HOP_LIMIT)
    if hops is None or hops > limit:
        shown = f"{hops}" if raw is not None else f"unset (EKS applies {UNSET_HOP_LIMIT})"
        report(
            f"metadataOptions.httpPutResponseHopLimit is {shown}, above {limit}: pods can read the node role's "
            "credentials. Fix: set http_put_response_hop_limit=1 and give pods Pod Identity / IRSA roles, or "
            "list this template under exceptions."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-009",
    name="lt-imds-hop-limit",
    description="Launch templates must set the IMDS hop limit to 1 unless excepted by name.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Set metadataOptions.httpPutResponseHopLimit to 1; use EKS Pod Identity or IRSA for pod "
    "credentials. Mandatory in prod's config.",
    references=("CKV_AWS_341", "CT.EC2.PR.2", "SH AutoScaling.4"),
    kind="resource",
    resource_types=frozenset({LAUNCH_TEMPLATE}),
    validate=validate,
    config={
        "maxHopLimit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 64,
            "default": 1,
            "description": "Highest hop limit allowed.",
        },
        "exceptions": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Launch template names allowed a hop limit of 2.",
        },
    },
)
