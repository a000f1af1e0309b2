"""Exact messages of the network guardrails built on the reachability reader (GC-SEC-001 eks-endpoint-private,
GC-SEC-151 nacl-no-world-admin-ports, GC-SEC-152 resource-policy-no-public-principal), written against the mutants
`scripts/mutation.py` left alive: a user reads these messages, so each is named in full.
"""

from __future__ import annotations

from gpucloud.guard.harness import UNKNOWN, Res, resource_messages, stack_flagged, stack_messages

EKS = "aws:eks/cluster:Cluster"
PUBLIC_FIX = "Fix: set vpc_config.endpoint_public_access=False, or restrict public_access_cidrs to your networks."


def _cluster(**vpc: object) -> Res:
    return Res(EKS, "c", {"vpcConfig": vpc})


def test_eks_endpoint_messages():
    assert resource_messages("eks-endpoint-private", _cluster()) == [
        "c: vpcConfig.endpointPrivateAccess is not true, so nodes reach the API over the internet. "
        "Fix: set vpc_config.endpoint_private_access=True.",
        f"c: the API endpoint is public to the whole internet (publicAccessCidrs unset (AWS default 0.0.0.0/0)). "
        f"{PUBLIC_FIX}",
    ]
    halves = _cluster(
        endpointPrivateAccess=True, endpointPublicAccess=True, publicAccessCidrs=["0.0.0.0/1", "128.0.0.0/1"]
    )
    assert resource_messages("eks-endpoint-private", halves) == [
        f"c: the API endpoint is public to the whole internet (publicAccessCidrs 0.0.0.0/1, 128.0.0.0/1). {PUBLIC_FIX}"
    ]
    named = _cluster(
        endpointPrivateAccess=True, endpointPublicAccess=True, publicAccessCidrs=["198.51.100.0/24", "203.0.113.0/24"]
    )
    assert resource_messages("eks-endpoint-private", named) == [
        "c: the API endpoint is public (to 198.51.100.0/24, 203.0.113.0/24), which this environment does not "
        "allow. Fix: set vpc_config.endpoint_public_access=False and reach the API through the VPC."
    ]
    assert resource_messages("eks-endpoint-private", named, {"allowRestrictedPublicAccess": True}) == []
    private = _cluster(endpointPrivateAccess=True, endpointPublicAccess=False)
    assert resource_messages("eks-endpoint-private", private) == []


# --- GC-SEC-152 resource-policy-no-public-principal: the types scoped by inputs ------------------------------


def test_public_permission_messages_name_their_scoping_inputs():
    fn = Res("aws:lambda/permission:Permission", "p", {"principal": "*", "action": "lambda:InvokeFunction"})
    assert resource_messages("resource-policy-no-public-principal", fn) == [
        "p: principal '*' with none of sourceArn, sourceAccount, principalOrgId set: every AWS account can use "
        "it. Fix: name the accounts or service principals that need access, or set sourceArn / sourceAccount / "
        "principalOrgId to scope it."
    ]
    layer = Res("aws:lambda/layerVersionPermission:LayerVersionPermission", "l", {"principal": "*"})
    assert resource_messages("resource-policy-no-public-principal", layer) == [
        "l: principal '*' with none of organizationId set: every AWS account can use it. Fix: name the accounts "
        "or service principals that need access, or set organizationId to scope it."
    ]
    scoped = Res("aws:lambda/permission:Permission", "s", {"principal": "*", "principalOrgId": "o-abc"})
    assert resource_messages("resource-policy-no-public-principal", scoped) == []


# --- GC-SEC-151 nacl-no-world-admin-ports --------------------------------------------------------------------

NACL = "aws:ec2/networkAcl:NetworkAcl"
DEFAULT_NACL = "aws:ec2/defaultNetworkAcl:DefaultNetworkAcl"
NACL_RULE = "aws:ec2/networkAclRule:NetworkAclRule"
NACL_FIX = (
    "Fix: allow only your own networks on admin ports (a deny of 0.0.0.0/0 and ::/0 numbered before the allow "
    "rules), and reach nodes through SSM instead."
)


def _inline(name: str, *rules: dict[str, object], type_: str = NACL) -> Res:
    return Res(type_, name, {"ingress": list(rules)})


def _in(number: float, action: str, cidr: str, port: float = 22.0, protocol: str = "tcp", v6: bool = False):
    return {
        "ruleNo": number,
        "action": action,
        "protocol": protocol,
        "fromPort": port,
        "toPort": port,
        ("ipv6CidrBlock" if v6 else "cidrBlock"): cidr,
    }


def _standalone(name: str, acl_id: str, number: float, action: str, cidr: str, *, egress: bool = False) -> Res:
    props = {
        "networkAclId": acl_id,
        "ruleNumber": number,
        "egress": egress,
        "protocol": "tcp",
        "ruleAction": action,
        "cidrBlock": cidr,
        "fromPort": 22.0,
        "toPort": 22.0,
    }
    return Res(NACL_RULE, name, props)


def test_nacl_ipv6_default_acl_and_message():
    v6 = _inline("v6", _in(100.0, "allow", "::/0", v6=True))
    assert stack_messages("nacl-no-world-admin-ports", [v6]) == [
        ("v6", f"v6: network ACL ingress rule(s) 100 admit the internet (::/0) to port 22 (SSH). {NACL_FIX}")
    ]
    default = _inline("default", _in(100.0, "allow", "0.0.0.0/0", 3389.0), type_=DEFAULT_NACL)
    assert stack_flagged("nacl-no-world-admin-ports", [default]) == {"default"}


def test_nacl_rules_are_read_in_number_order_and_summed():
    # Listed allow first: the deny numbered 0 still comes first.
    deny_zero = _inline("acl", _in(1.0, "allow", "0.0.0.0/0"), _in(0.0, "deny", "0.0.0.0/0"))
    assert stack_flagged("nacl-no-world-admin-ports", [deny_zero]) == set()
    # A rule for another port before the allow does not end the walk.
    https_first = _inline("acl", _in(50.0, "allow", "0.0.0.0/0", 443.0), _in(100.0, "allow", "0.0.0.0/0"))
    assert stack_flagged("nacl-no-world-admin-ports", [https_first]) == {"acl"}
    # Two quarters of IPv4 together pass a 30 % floor that each alone does not.
    quarters = _inline("acl", _in(100.0, "allow", "64.0.0.0/2"), _in(110.0, "allow", "128.0.0.0/2"))
    assert stack_messages("nacl-no-world-admin-ports", [quarters], {"minPublicShare": 0.3}) == [
        (
            "acl",
            "acl: network ACL ingress rule(s) 100, 110 admit the internet (64.0.0.0/2, 128.0.0.0/2) to port 22 "
            f"(SSH). {NACL_FIX}",
        )
    ]
    one = _inline("acl", _in(100.0, "allow", "64.0.0.0/2"))
    assert stack_flagged("nacl-no-world-admin-ports", [one], {"minPublicShare": 0.3}) == set()


def test_nacl_standalone_rules_join_by_literal_acl_id():
    # Same literal ACL: the deny numbered first closes what the allow opens (listed allow first).
    joined = [
        _standalone("out", "acl-1", 10.0, "allow", "0.0.0.0/0", egress=True),
        _standalone("allow", "acl-1", 100.0, "allow", "0.0.0.0/0"),
        _standalone("deny", "acl-1", 50.0, "deny", "0.0.0.0/0"),
    ]
    assert stack_flagged("nacl-no-world-admin-ports", joined) == set()
    # Different literal ACLs are judged apart.
    apart = [
        _standalone("deny", "acl-1", 50.0, "deny", "0.0.0.0/0"),
        _standalone("allow", "acl-2", 100.0, "allow", "0.0.0.0/0"),
    ]
    assert stack_messages("nacl-no-world-admin-ports", apart) == [
        (
            "allow",
            f"allow: network ACL ingress rule(s) 100 admit the internet (0.0.0.0/0) to port 22 (SSH). {NACL_FIX}",
        )
    ]


def test_nacl_rule_resources_join_a_default_acl_and_egress_does_not_end_the_walk():
    default = Res(DEFAULT_NACL, "default", {"ingress": [_in(50.0, "deny", "0.0.0.0/0")]})
    rule = _standalone("allow", "acl-0", 100.0, "allow", "0.0.0.0/0")
    linked = Res(rule.type, rule.name, {**rule.props, "networkAclId": UNKNOWN}, deps={"networkAclId": ["default"]})
    # Joined by its dependency on the default ACL: the deny numbered first closes port 22.
    assert stack_flagged("nacl-no-world-admin-ports", [default, linked]) == set()
    egress_first = [
        _standalone("out", "acl-1", 10.0, "allow", "0.0.0.0/0", egress=True),
        _standalone("in", "acl-1", 100.0, "allow", "0.0.0.0/0"),
    ]
    assert stack_flagged("nacl-no-world-admin-ports", egress_first) == {"in"}
