"""GC-SEC-013 sg-no-world-ingress: no ingress from the internet, however the sources are written.

The pack's one notion of "world": the union of every source a rule admits (IPv4 and IPv6 CIDRs, the entries of
managed prefix lists in the plan, inline ``ManagedPrefixList.entries`` and separate ``ManagedPrefixListEntry``
resources) measured against the public address space with the stdlib ``ipaddress`` module. A union covering at
least ``minPublicShare`` of the public IPv4 or IPv6 space is the world, so ``0.0.0.0/1`` + ``128.0.0.0/1``,
``::0/0`` or ``::/1`` + ``8000::/1`` are caught like ``0.0.0.0/0`` (readers/reach.py owns that notion). Rules are
read inline on ``ec2.SecurityGroup`` (and ``ec2.DefaultSecurityGroup``) and as separate
``ec2.SecurityGroupRule`` / ``vpc.SecurityGroupIngressRule`` resources, and the sources of every rule on the same
group whose protocol and ports cover a rule's count together (one rule per half of the internet is still the
internet). Self rules and source security groups pass; 80/443 pass on
groups tagged as load-balancer groups.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from .. import base
from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, get, integer, maps, strings, tags_of
from ..base import text as text_of
from ..readers import reach
from ..stack import linked, of_type

SG = "aws:ec2/securityGroup:SecurityGroup"
# The default security group of a VPC takes the same inline ingress rules (pulumi-aws DefaultSecurityGroup).
DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
PREFIX_LIST = "aws:ec2/managedPrefixList:ManagedPrefixList"
PREFIX_LIST_ENTRY = "aws:ec2/managedPrefixListEntry:ManagedPrefixListEntry"
WEB_PORTS = (80, 443)
ALL_PROTOCOLS = ("-1", "all", "")
_PROTOCOL_NAMES = {"6": "tcp", "17": "udp", "1": "icmp", "58": "icmpv6"}

# Judge one resource at a time where the pack can (an unknown value in one rule leaves the others decided).
deciding: Any = getattr(base, "deciding", lambda _resource: contextlib.nullcontext())
# The reachability reader (readers/reach.py) owns the notion of the world; these names stay importable here.
Network = reach.Network
parse = reach.parse
public_share = reach.public_share
is_world = reach.is_world
public_space = reach.public_space
_exclude = reach.exclude
_V4_SPECIAL = reach._V4_SPECIAL


@dataclass
class Entry:
    """One ingress rule: who reports it, how it is named in messages, what it opens and to whom."""

    urn: str
    where: str
    group: str
    protocol: str
    lo: int
    hi: int
    sources: list[str]
    networks: list[Network]
    lb: bool

    @property
    def all_ports(self) -> bool:
        return self.protocol in ALL_PROTOCOLS or (self.lo <= 0 and self.hi >= 65535)

    def covers(self, other: Entry) -> bool:
        if self.protocol in ALL_PROTOCOLS:
            return True
        return self.protocol == other.protocol and self.lo <= other.lo and self.hi >= other.hi


def _protocol(value: str) -> str:
    p = value.strip().lower()
    return _PROTOCOL_NAMES.get(p, p)


def _prefix_networks(pls: list[Any], resources: list[Any]) -> tuple[list[str], list[Network]]:
    cidrs: list[str] = []
    for pl in pls:
        cidrs += [text_of(get(e, "cidr")) for e in maps(get(pl.props, "entries"))]
        for e in of_type(resources, PREFIX_LIST_ENTRY):
            if any(d.urn == pl.urn for d in linked(e, "prefixListId")):
                cidrs.append(text_of(get(e.props, "cidr")))
    nets = [n for c in cidrs if c and (n := parse(c)) is not None]
    return [f"prefix list {pl.name}" for pl in pls], nets


def _entry(
    urn: str, where: str, group: str, rule: Any, cidr_keys: tuple[str, ...], pls: list[Any], resources: list[Any]
) -> Entry:
    protocol = _protocol(text_of(get(rule, "protocol")) or text_of(get(rule, "ipProtocol")))
    lo = integer(get(rule, "fromPort"))
    hi = integer(get(rule, "toPort"))
    # Ports left out (or -1) open every port of the protocol.
    lo = 0 if lo is None or lo < 0 else lo
    hi = 65535 if hi is None or hi < 0 else hi
    cidrs = [c for k in cidr_keys for c in strings(get(rule, k))]
    networks = [n for c in cidrs if (n := parse(c)) is not None]
    names, pl_nets = _prefix_networks(pls, resources)
    return Entry(urn, where, group, protocol, lo, hi, cidrs + names, networks + pl_nets, False)


def entries(resources: list[Any], cfg: Config) -> list[Entry]:
    lb_key, lb_value = str(cfg["loadBalancerTagKey"]), str(cfg["loadBalancerTagValue"])
    lb_groups = {r.urn for r in of_type(resources, SG, DEFAULT_SG) if tags_of(r.props).get(lb_key) == lb_value}
    out: list[Entry] = []
    for sg in of_type(resources, SG, DEFAULT_SG):
        with deciding(sg):
            pls = linked(sg, "ingress", PREFIX_LIST)
            for i, rule in enumerate(maps(get(sg.props, "ingress"))):
                mine = pls if strings(get(rule, "prefixListIds")) else []
                cidr_keys = ("cidrBlocks", "ipv6CidrBlocks")
                out.append(_entry(sg.urn, f"ingress[{i}]: ", sg.urn, rule, cidr_keys, mine, resources))
    for r in of_type(resources, SG_RULE, INGRESS_RULE):
        with deciding(r):
            if r.resource_type == SG_RULE:
                if text_of(get(r.props, "type")) != "ingress":
                    continue
                keys, pl_prop = ("cidrBlocks", "ipv6CidrBlocks"), "prefixListIds"
            else:
                keys, pl_prop = ("cidrIpv4", "cidrIpv6"), "prefixListId"
            # The group the rule joins: a resource of the plan (an SG, or a cluster whose SG is computed), else
            # the literal id; rules on the same group are judged together.
            groups = linked(r, "securityGroupId")
            if groups:
                group = groups[0].urn
            else:
                literal = text_of(get(r.props, "securityGroupId"))
                group = f"literal:{literal}" if literal else r.urn
            out.append(_entry(r.urn, "", group, r.props, keys, linked(r, pl_prop, PREFIX_LIST), resources))
    for e in out:
        e.lb = e.group in lb_groups
    return out


def _describe(e: Entry, sources: list[str]) -> str | None:
    if e.lb and not e.all_ports and e.lo == e.hi and e.lo in WEB_PORTS:
        return None
    span = "all ports" if e.all_ports else (f"port {e.lo}" if e.lo == e.hi else f"ports {e.lo}-{e.hi}")
    level = "CRITICAL: " if e.all_ports else ""
    protocol = "all protocols" if e.protocol in ALL_PROTOCOLS else e.protocol
    return f"{e.where}{level}ingress from the internet ({', '.join(sources)}) on {protocol} {span}"


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    threshold = float(cfg["minPublicShare"])
    fix = (
        "Fix: allow only the VPC CIDR, a prefix list of your own ranges or a source security group (self rules "
        "for EFA), and reach nodes through SSM instead of open ports."
    )
    found = entries(list(args.resources), cfg)
    for e in found:
        if not e.networks:
            continue
        peers = [f for f in found if f.group == e.group and f.networks and f.covers(e)]
        together = [n for f in [e, *peers] for n in f.networks]
        if not is_world(together, threshold):
            continue
        sources = list(dict.fromkeys(s for f in [e, *peers] for s in f.sources))
        msg = _describe(e, sources)
        if msg:
            report(e.urn, f"{msg}. {fix}")


GUARDRAIL = Guardrail(
    id="GC-SEC-013",
    name="sg-no-world-ingress",
    description="Security groups must not allow ingress from the internet (any IPv4/IPv6 CIDRs or prefix lists "
    "whose union covers a large share of the public address space); self rules pass.",
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
    kind="stack",
    surfaces=frozenset({"network"}),
    reads=frozenset({SG, DEFAULT_SG, SG_RULE, INGRESS_RULE, PREFIX_LIST, PREFIX_LIST_ENTRY}),
    validate=validate,
    config={
        "loadBalancerTagKey": {
            "type": "string",
            "default": "gpucloud.io/load-balancer",
            "description": "Tag key marking load-balancer security groups (80/443 from the internet allowed).",
        },
        "loadBalancerTagValue": {"type": "string", "default": "true", "description": "Value of that tag."},
        "minPublicShare": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": 0.01,
            "description": "Share of the public IPv4 or IPv6 address space (0-1) from which a union of sources "
            "counts as the internet; 0.01 is about a /7 of IPv4.",
        },
    },
)
