"""GC-SEC-151 nacl-no-world-admin-ports: no network ACL admits the internet to SSH (22) or RDP (3389).

Security Hub control EC2.21 ("Network ACLs should not allow ingress from 0.0.0.0/0 to port 22 or port 3389") and
Checkov CKV_AWS_231 / CKV_AWS_232. A network ACL is evaluated in rule-number order, first match wins, for each
address (Amazon VPC user guide, "Control subnet traffic with network access control lists": "Rules are evaluated
starting with the lowest numbered rule ... as soon as a rule matches traffic, it's applied"). So the policy walks
the ingress rules of each ACL in order for each admin port, keeps the addresses a lower-numbered deny already took,
and judges what the allow rules admit as one union with the reachability reader (readers/reach.py): two allow
rules of half the internet each are the internet, a deny of the world numbered first closes it.

Rules are read inline on ``ec2.NetworkAcl`` / ``ec2.DefaultNetworkAcl`` (``ingress[]``: ``action``, ``ruleNo``)
and as separate ``ec2.NetworkAclRule`` resources (``egress`` false, ``ruleAction``, ``ruleNumber``), joined to
their ACL by ``networkAclId``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    deciding,
    get,
    integer,
    maps,
    text,
    truthy,
)
from ..readers import reach
from ..stack import linked, of_type

NACL = "aws:ec2/networkAcl:NetworkAcl"
DEFAULT_NACL = "aws:ec2/defaultNetworkAcl:DefaultNetworkAcl"
NACL_RULE = "aws:ec2/networkAclRule:NetworkAclRule"
ADMIN_PORTS = {22: "SSH", 3389: "RDP"}
_ALL = ("-1", "all")
_TCP = ("tcp", "6")


@dataclass(frozen=True)
class Rule:
    urn: str  # where a finding about this rule goes
    number: int
    allow: bool
    protocol: str
    lo: int
    hi: int
    cidrs: tuple[str, ...]

    def covers(self, port: int) -> bool:
        if self.protocol in _ALL:
            return True
        return self.protocol in _TCP and self.lo <= port <= self.hi


def _rule(urn: str, r: Any, number_key: str, action_key: str) -> Rule:
    cidrs = tuple(c for k in ("cidrBlock", "ipv6CidrBlock") if (c := text(get(r, k))))
    return Rule(
        urn,
        integer(get(r, number_key), 0) or 0,
        text(get(r, action_key)).strip().lower() == "allow",
        text(get(r, "protocol")).strip().lower(),
        integer(get(r, "fromPort"), 0) or 0,
        integer(get(r, "toPort"), 0) or 0,
        cidrs,
    )


def admitted(rules: list[Rule], port: int) -> tuple[list[reach.Network], list[Rule]]:
    """The addresses the ACL admits to ``port`` (first matching rule by number wins) and the allow rules that
    admit some of them."""
    remaining: list[reach.Network] = [reach.ALL_V4, reach.ALL_V6]
    found: list[reach.Network] = []
    by: list[Rule] = []
    for rule in sorted(rules, key=lambda r: r.number):
        if not rule.covers(port):
            continue
        nets = [n for c in rule.cidrs if (n := reach.parse(c)) is not None]
        if rule.allow:
            taken = [x for n in nets for x in reach.intersect(remaining, n)]
            if taken:
                found += taken
                by.append(rule)
        remaining = reach.exclude(remaining, nets)
    return found, by


def _acls(resources: list[Any]) -> dict[str, list[Rule]]:
    """ACL key -> its ingress rules (each rule knows the resource a finding about it goes to)."""
    out: dict[str, list[Rule]] = {}
    for acl in of_type(resources, NACL, DEFAULT_NACL):
        with deciding(acl):
            rules = [_rule(acl.urn, r, "ruleNo", "action") for r in maps(get(acl.props, "ingress"))]
            out[acl.urn] = rules
    for r in of_type(resources, NACL_RULE):
        with deciding(r):
            if truthy(get(r.props, "egress")):
                continue
            parents = linked(r, "networkAclId", NACL, DEFAULT_NACL)
            key = parents[0].urn if parents else f"literal:{text(get(r.props, 'networkAclId')) or r.urn}"
            rule = _rule(r.urn, r.props, "ruleNumber", "ruleAction")
            out.setdefault(key, []).append(rule)
    return out


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    threshold = float(cfg["minPublicShare"])
    for rules in _acls(list(args.resources)).values():
        for port, what in ADMIN_PORTS.items():
            nets, by = admitted(rules, port)
            if not reach.is_world(nets, threshold):
                continue
            sources = ", ".join(dict.fromkeys(c for r in by for c in r.cidrs))
            numbers = ", ".join(str(r.number) for r in by)
            report(
                by[0].urn,  # the first allow that admits the internet: the ACL, or the rule resource
                f"network ACL ingress rule(s) {numbers} admit the internet ({sources}) to port {port} ({what}). "
                "Fix: allow only your own networks on admin ports (a deny of 0.0.0.0/0 and ::/0 numbered before "
                "the allow rules), and reach nodes through SSM instead.",
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-151",
    name="nacl-no-world-admin-ports",
    description="Network ACLs must not admit the internet (a union of CIDRs covering a share of the public "
    "address space, after lower-numbered denies) to SSH (22) or RDP (3389).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Number a deny of 0.0.0.0/0 and ::/0 for ports 22 and 3389 before the allow rules, or "
    "allow only your own networks there.",
    references=("SH EC2.21", "CKV_AWS_231", "CKV_AWS_232"),
    kind="stack",
    surfaces=frozenset({"network"}),
    reads=frozenset({NACL, DEFAULT_NACL, NACL_RULE}),
    validate=validate,
    config={
        "minPublicShare": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": reach.DEFAULT_SHARE,
            "description": "Share of the public IPv4 or IPv6 address space (0-1) from which the admitted "
            "addresses count as the internet.",
        },
    },
)
