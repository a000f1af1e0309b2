"""sg-no-world-ingress: one notion of "world" over IPv4/IPv6 unions, prefix lists and every rule kind."""

import ipaddress

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies.security import world_ingress as w

SG = "aws:ec2/securityGroup:SecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
PL = "aws:ec2/managedPrefixList:ManagedPrefixList"
PLE = "aws:ec2/managedPrefixListEntry:ManagedPrefixListEntry"
FIX = (
    "Fix: allow only the VPC CIDR, a prefix list of your own ranges or a source security group (self rules for "
    "EFA), and reach nodes through SSM instead of open ports."
)


def nets(*cidrs):
    return [ipaddress.ip_network(c) for c in cidrs]


def sg(name, *rules, tags=None, deps=None):
    props = {"ingress": list(rules)}
    if tags:
        props["tags"] = tags
    return Res(SG, name, props, deps=deps or {})


def tcp(lo, hi, *cidrs, key="cidrBlocks"):
    return {"protocol": "tcp", "fromPort": float(lo), "toPort": float(hi), key: list(cidrs)}


def test_public_space_excludes_private_and_reserved_ranges():
    v4 = w.public_space(4)
    assert sum(n.num_addresses for n in v4) == 2**32 - sum(ipaddress.ip_network(c).num_addresses for c in w._V4_SPECIAL)
    assert not any(n.overlaps(ipaddress.ip_network("10.0.0.0/8")) for n in v4)
    assert any(n.overlaps(ipaddress.ip_network("8.8.8.0/24")) for n in v4)
    v6 = w.public_space(6)
    assert sum(n.num_addresses for n in v6) == 2**125 - 2**96
    assert not any(n.overlaps(ipaddress.ip_network("fd00::/8")) for n in v6)


@pytest.mark.parametrize(
    ("cidrs", "version", "share"),
    [
        (["0.0.0.0/0"], 4, 1.0),
        (["0.0.0.0/1", "128.0.0.0/1"], 4, 1.0),
        (["::0/0"], 6, 1.0),
        (["::/1", "8000::/1"], 6, 1.0),
        (["10.0.0.0/8", "192.168.0.0/16"], 4, 0.0),
        (["fd00::/8"], 6, 0.0),
        (["2000::/3"], 6, 1.0),
        (["2000::/4"], 6, 0.5),
        (["0.0.0.0/0"], 6, 0.0),
    ],
)
def test_public_share(cidrs, version, share):
    assert w.public_share(nets(*cidrs), version) == pytest.approx(share)


def test_public_share_counts_a_block_inside_public_space_by_its_own_size():
    one = ipaddress.ip_network("8.0.0.0/8")
    share = w.public_share([one], 4)
    assert share == pytest.approx(2**24 / sum(n.num_addresses for n in w.public_space(4)))
    assert w.is_world([one], 0.01) is False
    assert w.is_world([one], 0.001) is True
    assert w.is_world(nets("::/1"), 0.5) is True


def test_parse_accepts_host_bits_and_rejects_garbage():
    assert w.parse(" 10.1.2.3/8 ") == ipaddress.ip_network("10.0.0.0/8")
    assert w.parse("::0/0") == ipaddress.ip_network("::/0")
    assert w.parse("not-a-cidr") is None


def test_split_halves_ipv6_and_private_blocks():
    resources = [
        sg("halves", tcp(22, 22, "0.0.0.0/1", "128.0.0.0/1")),
        sg("v6-halves", tcp(22, 22, "::/1", "8000::/1", key="ipv6CidrBlocks")),
        sg("v6-zero", tcp(22, 22, "::0/0", key="ipv6CidrBlocks")),
        sg("private", tcp(22, 22, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")),
        sg("one-office", tcp(22, 22, "198.51.100.0/24", "8.8.8.0/24")),
        sg("self", {"protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "self": True}),
        sg("garbage", tcp(22, 22, "world")),
    ]
    assert stack_flagged("sg-no-world-ingress", resources) == {"halves", "v6-halves", "v6-zero"}
    assert stack_messages("sg-no-world-ingress", resources[:1]) == [
        ("halves", f"halves: ingress[0]: ingress from the internet (0.0.0.0/1, 128.0.0.0/1) on tcp port 22. {FIX}")
    ]


def test_ports_all_protocols_and_port_ranges_are_named():
    resources = [
        Res(INGRESS, "all-proto", {"ipProtocol": "-1", "cidrIpv4": "0.0.0.0/0"}),
        Res(INGRESS, "tcp-no-ports", {"ipProtocol": "tcp", "cidrIpv4": "0.0.0.0/0"}),
        Res(SG_RULE, "full-range", {"type": "ingress", **tcp(0, 65535, "0.0.0.0/0")}),
        Res(SG_RULE, "range", {"type": "ingress", **tcp(1000, 2000, "0.0.0.0/0")}),
        Res(
            SG_RULE,
            "proto-number",
            {"type": "ingress", "protocol": "6", "fromPort": 22.0, "toPort": 22.0, "cidrBlocks": ["0.0.0.0/0"]},
        ),
        Res(
            SG_RULE,
            "minus-one-ports",
            {"type": "ingress", "protocol": "udp", "fromPort": -1.0, "toPort": -1.0, "cidrBlocks": ["0.0.0.0/0"]},
        ),
        Res(SG_RULE, "egress", {"type": "egress", "protocol": "-1", "cidrBlocks": ["0.0.0.0/0"]}),
    ]
    got = dict(stack_messages("sg-no-world-ingress", resources))
    assert set(got) == {"all-proto", "tcp-no-ports", "full-range", "range", "proto-number", "minus-one-ports"}
    assert got["all-proto"] == (
        f"all-proto: CRITICAL: ingress from the internet (0.0.0.0/0) on all protocols all ports. {FIX}"
    )
    assert got["tcp-no-ports"].startswith("tcp-no-ports: CRITICAL: ingress from the internet (0.0.0.0/0) on tcp all")
    assert got["full-range"].startswith("full-range: CRITICAL: ingress from the internet (0.0.0.0/0) on tcp all ports")
    assert got["range"].startswith("range: ingress from the internet (0.0.0.0/0) on tcp ports 1000-2000. ")
    assert got["proto-number"].startswith("proto-number: ingress from the internet (0.0.0.0/0) on tcp port 22. ")
    assert got["minus-one-ports"].startswith("minus-one-ports: CRITICAL: ingress from the internet (0.0.0.0/0) on udp")


def test_load_balancer_groups_may_open_80_and_443_only():
    lb = {"gpucloud.io/load-balancer": "true"}
    resources = [
        sg("lb-443", tcp(443, 443, "0.0.0.0/0"), tags=lb),
        sg("lb-80", tcp(80, 80, "::/0", key="ipv6CidrBlocks"), tags=lb),
        sg("lb-22", tcp(22, 22, "0.0.0.0/0"), tags=lb),
        sg("lb-range", tcp(80, 443, "0.0.0.0/0"), tags=lb),
        sg("lb-all", {"protocol": "-1", "cidrBlocks": ["0.0.0.0/0"]}, tags=lb),
        sg("not-lb-443", tcp(443, 443, "0.0.0.0/0"), tags={"gpucloud.io/load-balancer": "false"}),
        sg("lb-rules", tags=lb),
        Res(
            INGRESS,
            "lb-rule-443",
            {"ipProtocol": "tcp", "fromPort": 443.0, "toPort": 443.0, "cidrIpv4": "0.0.0.0/0"},
            deps={"securityGroupId": ["lb-rules"]},
        ),
        Res(
            INGRESS,
            "lb-rule-8080",
            {"ipProtocol": "tcp", "fromPort": 8080.0, "toPort": 8080.0, "cidrIpv4": "0.0.0.0/0"},
            deps={"securityGroupId": ["lb-rules"]},
        ),
    ]
    assert stack_flagged("sg-no-world-ingress", resources) == {
        "lb-22",
        "lb-range",
        "lb-all",
        "not-lb-443",
        "lb-rule-8080",
    }
    custom = {"loadBalancerTagKey": "role", "loadBalancerTagValue": "edge"}
    edge = [sg("edge", tcp(443, 443, "0.0.0.0/0"), tags={"role": "edge"})]
    assert stack_flagged("sg-no-world-ingress", edge, custom) == set()
    assert stack_flagged("sg-no-world-ingress", edge) == {"edge"}


def test_rules_on_the_same_group_count_together_when_they_cover_the_port():
    def rule(name, proto, lo, hi, cidr, group="g"):
        return Res(
            INGRESS,
            name,
            {"ipProtocol": proto, "fromPort": float(lo), "toPort": float(hi), "cidrIpv4": cidr},
            deps={"securityGroupId": [group]},
        )

    quarter = "minPublicShare"
    cfg = {quarter: 0.6}
    resources = [
        sg("g"),
        sg("h"),
        sg("other"),
        rule("low", "tcp", 22, 22, "0.0.0.0/1"),
        rule("high", "tcp", 22, 22, "128.0.0.0/1"),
        rule("other-port", "tcp", 23, 23, "128.0.0.0/1"),
        rule("udp", "udp", 22, 22, "128.0.0.0/1"),
        rule("wide", "tcp", 0, 100, "128.0.0.0/1", group="h"),
        rule("narrow", "tcp", 22, 22, "0.0.0.0/1", group="h"),
        rule("elsewhere", "tcp", 22, 22, "128.0.0.0/1", group="other"),
        # The group id is computed at preview; the dependency names the group.
        Res(
            INGRESS,
            "computed-id",
            {
                "ipProtocol": "tcp",
                "fromPort": 22.0,
                "toPort": 22.0,
                "cidrIpv4": "0.0.0.0/1",
                "securityGroupId": UNKNOWN,
            },
            deps={"securityGroupId": ["other"]},
        ),
    ]
    # At a 60 % threshold neither half alone is the internet; halves on one group and port are.
    assert stack_flagged("sg-no-world-ingress", resources, cfg) == {"low", "high", "narrow", "elsewhere", "computed-id"}
    literal = [
        Res(SG_RULE, "lit-a", {"type": "ingress", "securityGroupId": "sg-1", **tcp(22, 22, "0.0.0.0/1")}),
        Res(SG_RULE, "lit-b", {"type": "ingress", "securityGroupId": "sg-1", **tcp(22, 22, "128.0.0.0/1")}),
        Res(SG_RULE, "lit-c", {"type": "ingress", "securityGroupId": "sg-2", **tcp(22, 22, "128.0.0.0/1")}),
    ]
    assert stack_flagged("sg-no-world-ingress", literal, cfg) == {"lit-a", "lit-b"}


def test_managed_prefix_lists_inline_entries_and_entry_resources():
    resources = [
        Res(PL, "pl-world", {"entries": [{"cidr": "0.0.0.0/1"}]}),
        Res(PLE, "pl-world-rest", {"cidr": "128.0.0.0/1"}, deps={"prefixListId": ["pl-world"]}),
        Res(PL, "pl-office", {"entries": [{"cidr": "198.51.100.0/24"}, {"cidr": ""}]}),
        # An entry resource adds to the list it names (here making pl-office-2 the internet), no other.
        Res(PLE, "extra", {"cidr": "128.0.0.0/1"}, deps={"prefixListId": ["pl-office-2"]}),
        Res(PL, "pl-office-2", {"entries": [{"cidr": "203.0.113.0/24"}]}),
        sg(
            "inline-pl",
            {"protocol": "tcp", "fromPort": 22.0, "toPort": 22.0, "prefixListIds": ["pl-x"]},
            deps={"ingress": ["pl-world"]},
        ),
        sg("inline-no-pl", tcp(22, 22, "10.0.0.0/8"), deps={"ingress": ["pl-world"]}),
        Res(
            SG_RULE,
            "rule-pl",
            {"type": "ingress", "protocol": "-1", "prefixListIds": ["pl-x"]},
            deps={"prefixListIds": ["pl-world"]},
        ),
        Res(INGRESS, "vpc-pl", {"ipProtocol": "-1", "prefixListId": "pl-x"}, deps={"prefixListId": ["pl-world"]}),
        Res(INGRESS, "vpc-office", {"ipProtocol": "-1", "prefixListId": "pl-y"}, deps={"prefixListId": ["pl-office"]}),
        Res(
            INGRESS,
            "vpc-office-2",
            {"ipProtocol": "-1", "prefixListId": "pl-z"},
            deps={"prefixListId": ["pl-office-2"]},
        ),
        Res(INGRESS, "aws-managed", {"ipProtocol": "-1", "prefixListId": "pl-63a5400a"}),
    ]
    got = dict(stack_messages("sg-no-world-ingress", resources))
    assert set(got) == {"inline-pl", "rule-pl", "vpc-pl", "vpc-office-2"}
    assert got["vpc-pl"] == (
        f"vpc-pl: CRITICAL: ingress from the internet (prefix list pl-world) on all protocols all ports. {FIX}"
    )


def test_stray_entry_resource_joins_only_its_own_list():
    entries = w._prefix_networks
    pl = type("R", (), {"urn": "u1", "name": "one", "props": {"entries": [{"cidr": "10.0.0.0/8"}]}})()
    assert entries([pl], []) == (["prefix list one"], [ipaddress.ip_network("10.0.0.0/8")])


def test_exclude_cuts_holes_of_the_same_version_only():
    space = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("2000::/3")]
    out = w._exclude(space, ["10.1.0.0/16", "10.0.0.0/8", "11.0.0.0/8", "2001:db8::/32"])
    assert ipaddress.ip_network("10.0.0.0/8") not in out
    assert not any(n.version == 4 for n in out)
    assert sum(n.num_addresses for n in out if n.version == 6) == 2**125 - 2**96
    kept = w._exclude([ipaddress.ip_network("10.0.0.0/8")], ["10.1.0.0/16"])
    assert sum(n.num_addresses for n in kept) == 2**24 - 2**16
    assert all(n.subnet_of(ipaddress.ip_network("10.0.0.0/8")) for n in kept)
    assert w._exclude([ipaddress.ip_network("10.0.0.0/8")], ["192.168.0.0/16"]) == [ipaddress.ip_network("10.0.0.0/8")]


def test_default_group_and_ipv6_rule_resources_are_read():
    default = Res(
        "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "default", {"ingress": [tcp(22, 22, "0.0.0.0/0")]}
    )
    assert stack_flagged("sg-no-world-ingress", [default]) == {"default"}
    v6_rule = Res(
        SG_RULE,
        "v6",
        {"type": "ingress", "protocol": "tcp", "fromPort": 22.0, "toPort": 22.0, "ipv6CidrBlocks": ["::/0"]},
    )
    assert stack_flagged("sg-no-world-ingress", [v6_rule]) == {"v6"}
