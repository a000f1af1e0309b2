"""GC-SEC-171 public-exposure-review: what a program puts on the internet on purpose or by default, listed for
review (advisory), on every type the surface inventory lists as carrying network exposure.

Inventory-driven (surface_paths.py), judged by what the property name says, the same for every type:

- a public-address flag true (``mapPublicIpOnLaunch``, ECS / EventBridge / Scheduler / Pipes ``assignPublicIp``,
  DRS ``createPublicIp``, App Runner ``isPubliclyAccessible``): instances, tasks or services get public addresses.
  A public subnet behind a NAT gateway or a load balancer, or a public web service, is often the design, so this is
  a warning to review, not an error (GPU nodes' own public IPs are lt-no-public-ip's, an error).
- a load balancer with ``internal`` false or unset (pulumi-aws defaults it to false: internet-facing), its
  listeners named: a public front end is usually meant, so it is listed, not blocked.
- a public network configuration present (SES Mail Manager ingress points): mail taken from the internet.
- a source allow-list (``cidrAllowLists``, ``whitelistRules.cidr``, ``sourceIpConfig.cidrs``, Lightsail public port
  ``cidrs``, NetworkPolicy ``ingress.from.ipBlock.cidr``) whose union reaches the internet (readers/reach.py:
  ``0.0.0.0/1`` + ``128.0.0.0/1`` is the world like ``0.0.0.0/0``). Which ports face the world on purpose is a
  matter of design here, unlike administration ports on security groups (sg-no-world-ingress).

Types some guardrail already names for this surface are left to it (registry.py narrows the declaration).
"""

from __future__ import annotations

from typing import Any

from .. import surface_paths as sp
from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, has, integer, maps, strings
from ..readers import reach

JUDGED = frozenset({sp.TEMPLATE, sp.PUBLIC_FLAG, sp.INTERNAL, sp.PRESENCE, sp.ALLOW_CIDRS})


def kind(token: str, path: str) -> str | None:
    k = sp.network_kind(token, path)
    if k == sp.PUBLIC_FLAG and sp.is_data_endpoint(path):
        return None  # public-data-endpoint's
    return k if k in JUDGED else None


def _claims(token: str, path: str) -> str | None:
    k = sp.network_kind(token, path)
    if k == sp.PUBLIC_FLAG and sp.is_data_endpoint(path):
        return "other"
    return k


TYPES = sp.claimed("network", _claims, JUDGED)


def _listeners(props: Any) -> str:
    ports = [integer(get(x, "lbPort")) for x in maps(get(props, "listeners"))]
    shown = ", ".join(str(p) for p in ports if p is not None)
    return f" (listeners on port {shown})" if shown else ""


def _cidr_messages(path: str, found: list[tuple[str, Any]]) -> list[str]:
    r = reach.Reach()
    for _where, value in found:
        r.add(reach.split(strings(value)))
    if not r.is_world():
        return []
    shown = ", ".join(r.sources)
    return [
        f"{path} admits {shown}, which together reach the internet. Fix: list only the networks that need it, "
        "if this is not meant to be public."
    ]


def _template(args: Any, report: Report) -> None:
    """A template's resources, judged by the same property names (CloudFormation's PascalCase, camelCased); a
    load balancer there says ``Scheme: internet-facing`` where pulumi-aws says ``internal: false``."""
    cidrs: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for where, inner, value in sp.template_properties(args.resource_type, args.props):
        if sp.leaf(inner) == "scheme" and isinstance(value, str) and value.strip().lower() == "internet-facing":
            report(
                f"{where} is 'internet-facing': the load balancer is internet-facing. Review: make it internal "
                "unless it is meant to be a public front end."
            )
            continue
        k = kind("", inner)
        if k == sp.ALLOW_CIDRS:
            resource = where.split(".Properties", 1)[0]
            cidrs.setdefault((resource, inner), []).append((where, value))
        elif k == sp.PUBLIC_FLAG and sp.public_flag(value):
            report(
                f"{where} is {value!r}: it gets a public address on the internet. Review: use private subnets "
                "unless it is meant to be public."
            )
    for (resource, inner), found in cidrs.items():
        for message in _cidr_messages(f"{resource}.Properties {inner}", found):
            report(message)


def validate(args: Any, report: Report, cfg: Config) -> None:
    props = args.props
    for path in sp.paths_of(args.resource_type, "network"):
        k = kind(args.resource_type, path)
        if k == sp.TEMPLATE:
            _template(args, report)
        elif k == sp.INTERNAL:
            # Unset is internet-facing: pulumi-aws LoadBalancer ``internal`` defaults to false.
            value = get(props, path) if has(props, path) else None
            if not sp.public_flag(value):
                shown = "unset" if value is None else repr(value)
                report(
                    f"internal is {shown}: the load balancer is internet-facing{_listeners(props)}. Review: set "
                    "internal=True unless it is meant to be a public front end."
                )
        elif k == sp.ALLOW_CIDRS:
            for message in _cidr_messages(path, list(sp.values(props, path))):
                report(message)
        elif k is not None:
            for where, value in sp.values(props, path):
                if k == sp.PUBLIC_FLAG and sp.public_flag(value):
                    report(
                        f"{where} is {value!r}: it gets a public address on the internet. Review: use private "
                        "subnets (NAT or VPC endpoints for egress) unless it is meant to be public."
                    )
                elif k == sp.PRESENCE:
                    report(
                        f"{where} is set: it takes traffic from the internet. Review: use a VPC network "
                        "configuration unless it is meant to be public."
                    )


GUARDRAIL = Guardrail(
    id="GC-SEC-171",
    name="public-exposure-review",
    description="Resources given public addresses, internet-facing load balancers and source allow-lists that "
    "reach the internet are listed for review (every type the surface inventory lists as carrying network "
    "exposure).",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Use private subnets and internal load balancers unless the resource is meant to be public; "
    "list only the source networks that need access.",
    references=("CKV_AWS_130", "CKV_AWS_333", "CKV2_AWS_20", "SH EC2.15", "SH ECS.2", "SH ELB.x"),
    kind="resource",
    surfaces=frozenset({"network"}),
    resource_types=TYPES,
    validate=validate,
)
