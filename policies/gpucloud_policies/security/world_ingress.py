"""GC-SEC-013 sg-no-world-ingress: no ingress from 0.0.0.0/0 or ::/0.

Self-referencing rules (EFA needs all-protocol self rules) and security-group sources pass; ports 80/443 pass
on security groups tagged as load-balancer groups.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, integer, maps, strings, tags_of, text

SG = "aws:ec2/securityGroup:SecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
WORLD = ("0.0.0.0/0", "::/0")
WEB_PORTS = (80, 443)


def _world(rule: Any, v4: str, v6: str) -> list[str]:
    return [c for c in strings(get(rule, v4)) + strings(get(rule, v6)) if c in WORLD]


def _ports(rule: Any) -> tuple[str, int | None, int | None]:
    protocol = text(get(rule, "protocol")) or text(get(rule, "ipProtocol"))
    return protocol, integer(get(rule, "fromPort")), integer(get(rule, "toPort"))


def _describe(rule: Any, cidrs: list[str], lb: bool) -> str | None:
    protocol, lo, hi = _ports(rule)
    all_ports = protocol in ("-1", "all") or (lo in (0, None) and hi in (65535, None))
    if lb and not all_ports and lo == hi and lo in WEB_PORTS:
        return None
    span = "all ports" if all_ports else (f"port {lo}" if lo == hi else f"ports {lo}-{hi}")
    level = "CRITICAL: " if all_ports else ""
    return f"{level}ingress from {', '.join(cidrs)} on {protocol or 'tcp'} {span}"


def validate(args: Any, report: Report, cfg: Config) -> None:
    fix = (
        "Fix: allow only the VPC CIDR, a prefix list or a source security group (self rules for EFA), and "
        "reach nodes through SSM instead of open ports."
    )
    rt, props = args.resource_type, args.props
    if rt == SG:
        tags = tags_of(props)
        lb_key, lb_value = str(cfg["loadBalancerTagKey"]), str(cfg["loadBalancerTagValue"])
        lb = tags.get(lb_key) == lb_value
        for i, rule in enumerate(maps(get(props, "ingress"))):
            cidrs = _world(rule, "cidrBlocks", "ipv6CidrBlocks")
            msg = _describe(rule, cidrs, lb) if cidrs else None
            if msg:
                report(f"ingress[{i}]: {msg}. {fix}")
    elif rt == SG_RULE:
        if text(get(props, "type")) != "ingress":
            return
        # A self rule with a world CIDR beside it is still open to the world, so only the CIDRs decide.
        cidrs = _world(props, "cidrBlocks", "ipv6CidrBlocks")
        msg = _describe(props, cidrs, False) if cidrs else None
        if msg:
            report(f"{msg}. {fix}")
    elif rt == INGRESS_RULE:
        cidrs = _world(props, "cidrIpv4", "cidrIpv6")
        msg = _describe(props, cidrs, False) if cidrs else None
        if msg:
            report(f"{msg}. {fix}")


GUARDRAIL = Guardrail(
    id="GC-SEC-013",
    name="sg-no-world-ingress",
    description="Security groups must not allow ingress from 0.0.0.0/0 or ::/0 (self rules pass).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Replace world CIDRs with the VPC CIDR, a managed prefix list or a source security group.",
    references=(
        "CKV_AWS_24",
        "CKV_AWS_25",
        "CKV_AWS_260",
        "CKV_AWS_277",
        "AWS-0107",
        "SH EC2.13",
        "SH EC2.14",
        "SH EC2.18",
        "SH EC2.19",
        "SH EC2.53",
        "SH EC2.54",
        "CT.EC2.PR.3",
    ),
    kind="resource",
    resource_types=frozenset({SG, SG_RULE, INGRESS_RULE}),
    validate=validate,
    config={
        "loadBalancerTagKey": {
            "type": "string",
            "default": "gpucloud.io/load-balancer",
            "description": "Tag key marking load-balancer security groups (80/443 from the internet allowed).",
        },
        "loadBalancerTagValue": {"type": "string", "default": "true", "description": "Value of that tag."},
    },
)
