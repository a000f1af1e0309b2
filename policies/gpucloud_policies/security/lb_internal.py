"""GC-SEC-148 lb-internal-only: Services of type LoadBalancer get an internal load balancer unless config allows.

Two controllers may answer a LoadBalancer Service on EKS. The AWS Load Balancer Controller takes Services annotated
`service.beta.kubernetes.io/aws-load-balancer-type: external` (or `nlb-ip`, or with `spec.loadBalancerClass:
service.k8s.aws/nlb`) and reads `service.beta.kubernetes.io/aws-load-balancer-scheme`, whose default is
`internal`. Any other Service goes to the in-tree cloud provider, which creates an internet-facing load balancer
unless `service.beta.kubernetes.io/aws-load-balancer-internal: "true"` (AWS Load Balancer Controller docs,
"Network Load Balancer" annotations; Kubernetes cloud-provider-aws service annotations).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get

SERVICE = "kubernetes:core/v1:Service"
TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
IN_TREE_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"
LBC_CLASS = "service.k8s.aws/nlb"


def scheme(props: Any) -> str:
    """'internal' or 'internet-facing': what the controller answering this Service creates."""
    annotations = get(get(props, "metadata"), "annotations") or {}
    lbc = get(annotations, TYPE) in ("external", "nlb-ip") or get(get(props, "spec"), "loadBalancerClass") == LBC_CLASS
    if lbc:
        return "internet-facing" if get(annotations, SCHEME) == "internet-facing" else "internal"
    return "internal" if str(get(annotations, IN_TREE_INTERNAL)).lower() == "true" else "internet-facing"


def validate(args: Any, report: Report, cfg: Config) -> None:
    if get(get(args.props, "spec"), "type") != "LoadBalancer":
        return
    if scheme(args.props) == "internet-facing" and not cfg["allowInternetFacing"]:
        report(
            "this LoadBalancer Service gets an internet-facing load balancer, which this environment does not "
            f"allow. Fix: annotate it {TYPE}: external and {SCHEME}: internal (AWS Load Balancer Controller), or "
            "set allowInternetFacing for this stack."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-148",
    name="lb-internal-only",
    description="Services of type LoadBalancer must get internal load balancers unless config allows otherwise.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Annotate LoadBalancer Services with aws-load-balancer-type: external and "
    "aws-load-balancer-scheme: internal; allow internet-facing ones per stack with allowInternetFacing.",
    references=("AWS Load Balancer Controller service annotations", "cloud-provider-aws service annotations"),
    kind="resource",
    resource_types=frozenset({SERVICE}),
    validate=validate,
    config={
        "allowInternetFacing": {
            "type": "boolean",
            "default": False,
            "description": "Allow internet-facing load balancers for LoadBalancer Services.",
        },
    },
)
