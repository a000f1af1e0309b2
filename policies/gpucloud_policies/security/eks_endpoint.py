"""GC-SEC-001 eks-endpoint-private: the EKS API is private, or public only to named CIDRs where allowed.

An unset public-access flag or CIDR list counts as public, because those are the AWS defaults. The CIDRs are
judged as a union by the reachability reader (readers/reach.py): ``0.0.0.0/1`` + ``128.0.0.0/1`` is the whole
internet like ``0.0.0.0/0``.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, falsy, get, has, strings, truthy
from ..readers import reach

CLUSTER = T.EKS_CLUSTER


def validate(args: Any, report: Report, cfg: Config) -> None:
    vpc = get(args.props, "vpcConfig")
    if not truthy(get(vpc, "endpointPrivateAccess")):
        report(
            "vpcConfig.endpointPrivateAccess is not true, so nodes reach the API over the internet. "
            "Fix: set vpc_config.endpoint_private_access=True."
        )
    public = get(vpc, "endpointPublicAccess")
    if falsy(public):
        return
    cidrs = strings(get(vpc, "publicAccessCidrs")) if has(vpc, "publicAccessCidrs") else []
    # A typo EKS would reject must not read as a restriction.
    if not cidrs or reach.Reach.of(cidrs).is_world(unparsable_is_world=True):
        shown = "unset (AWS default 0.0.0.0/0)" if not cidrs else ", ".join(cidrs)
        report(
            f"the API endpoint is public to the whole internet (publicAccessCidrs {shown}). Fix: set "
            "vpc_config.endpoint_public_access=False, or restrict public_access_cidrs to your networks."
        )
    elif not cfg["allowRestrictedPublicAccess"]:
        report(
            f"the API endpoint is public (to {', '.join(cidrs)}), which this environment does not allow. "
            "Fix: set vpc_config.endpoint_public_access=False and reach the API through the VPC."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-001",
    name="eks-endpoint-private",
    description="EKS API endpoint must be private, or public only to restricted CIDRs where config allows.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set endpointPrivateAccess true and endpointPublicAccess false; where a public endpoint is "
    "needed (dev), list the allowed networks in publicAccessCidrs and set allowRestrictedPublicAccess.",
    references=("CKV_AWS_38", "CKV_AWS_39", "AWS-0040", "AWS-0041", "SH EKS.1", "CT.EKS.PR.1"),
    kind="resource",
    surfaces=frozenset({"network"}),
    resource_types=frozenset({CLUSTER}),
    validate=validate,
    config={
        "allowRestrictedPublicAccess": {
            "type": "boolean",
            "default": False,
            "description": "Allow a public endpoint limited to publicAccessCidrs (never a union that reaches the "
            "internet).",
        },
    },
)
