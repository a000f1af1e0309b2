"""GC-SEC-009 lt-imds-hop-limit: pods cannot reach the node's metadata service (hop limit 1).

Read from the fleet layer's settings of each path (gpucloud.fleet.settings). On a launch template, unset counts
as 2, the hop limit EKS managed node groups apply when the template does not set one. On a Karpenter
EC2NodeClass, unset is Karpenter's documented default: 1 for v1, 2 for v1beta1. On instances, spot requests and
launch configurations a stated limit is judged; an unset one is EC2's default, which depends on the AMI's
ImdsSupport (not in the plan), so it is not judged here.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T
from gpucloud.fleet.settings import node_settings

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, plain, unknown
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_REQUEST
from ..templates import inherits

UNSET_HOP_LIMIT = 2
NODE_CLASSES = frozenset(T.EC2_NODE_CLASSES)
_STATED_ONLY = frozenset({INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG})


def validate(args: Any, report: Report, cfg: Config) -> None:
    rt = args.resource_type
    if rt in (INSTANCE, SPOT_REQUEST) and inherits(args.props, "metadataOptions"):
        return
    s = node_settings(rt, plain(args.props))
    if s is None:
        return
    if "hop_limit" in s.unknown:
        raise unknown(s.unknown["hop_limit"])
    limit = 2 if args.name in set(cfg["exceptions"]) else int(cfg["maxHopLimit"])
    if s.hop_limit_raw is None and rt in _STATED_ONLY:
        return
    hops = s.hop_limit if rt != LAUNCH_TEMPLATE or s.hop_limit_raw is not None else UNSET_HOP_LIMIT
    if hops is None or hops > limit:
        if s.hop_limit_raw is not None:
            shown = f"{hops}"
        elif rt in NODE_CLASSES:
            shown = f"unset ({s.metadata_default}: {hops})"
        else:
            shown = f"unset (EKS applies {UNSET_HOP_LIMIT})"
        report(
            f"{s.metadata_path}.httpPutResponseHopLimit is {shown}, above {limit}: pods can read the node role's "
            "credentials. Fix: set http_put_response_hop_limit=1 and give pods Pod Identity / IRSA roles, or "
            "list this template under exceptions."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-009",
    name="lt-imds-hop-limit",
    description="Launch templates, instances and Karpenter EC2NodeClasses must set the IMDS hop limit to 1 unless "
    "excepted by name.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Set metadataOptions.httpPutResponseHopLimit to 1; use EKS Pod Identity or IRSA for pod "
    "credentials. Mandatory in prod's config.",
    references=("CKV_AWS_341", "CT.EC2.PR.2", "SH AutoScaling.4"),
    kind="resource",
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG, *NODE_CLASSES}),
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
            "description": "Launch template, instance or EC2NodeClass names allowed a hop limit of 2.",
        },
    },
)
