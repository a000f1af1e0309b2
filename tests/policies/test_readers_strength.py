"""Exact values of the shared readers (policies/gpucloud_policies/readers): reach and principals.

Written against the mutants `scripts/mutation.py` left alive (docs/performance.md, "Mutation score of the readers
and the guardrails"): each test names the value a reader must return, so a changed operator, constant or branch
fails it.
"""

from __future__ import annotations

import ipaddress

import pytest

from gpucloud.policies.gpucloud_policies.readers import principals, reach

# --- reach ---------------------------------------------------------------------------------------------------


def test_reach_keeps_every_source_as_written_and_skips_blanks():
    r = reach.Reach.of(["", None, " 10.0.0.0/8 ", "nope", "198.51.100.7"], ["pl-0123"])  # type: ignore[list-item]
    assert r.sources == ["10.0.0.0/8", "nope", "198.51.100.7", "pl-0123"]
    assert r.unparsable == ["nope"]
    assert r.networks == [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("198.51.100.7/32")]
    # Host bits are allowed, as AWS normalises them.
    assert reach.parse(" 10.1.2.3/8 ") == ipaddress.ip_network("10.0.0.0/8")
    assert reach.parse("10.0.0.0/33") is None


def test_reach_union_of_two_fields():
    a = reach.Reach.of(["0.0.0.0/1", "bad"])
    b = reach.Reach.of(["128.0.0.0/1", "0.0.0.0/1"])
    both = a | b
    assert both.sources == ["0.0.0.0/1", "bad", "128.0.0.0/1"]  # deduplicated, in order
    assert both.networks == [ipaddress.ip_network(n) for n in ("0.0.0.0/1", "128.0.0.0/1", "0.0.0.0/1")]
    assert both.unparsable == ["bad"]
    assert both.is_world() and not a.is_world(threshold=0.6)


def test_public_share_sums_every_network_of_the_union():
    total = sum(n.num_addresses for n in reach.public_space(4))
    two = [ipaddress.ip_network("8.0.0.0/8"), ipaddress.ip_network("11.0.0.0/8")]
    assert reach.public_share(two, 4) == 2 * 2**24 / total
    # A network larger than a public block counts only the public part (10/8 is private: 0.0.0.0/4 holds it).
    assert reach.public_share([ipaddress.ip_network("0.0.0.0/4")], 4) == (2**28 - 2**24 - 2**24) / total
    assert reach.public_share(two, 6) == 0.0


def test_world_threshold_is_inclusive_and_passed_through():
    net = [ipaddress.ip_network("8.0.0.0/8")]
    share = reach.public_share(net, 4)
    assert reach.is_world(net, threshold=share)
    assert not reach.is_world(net, threshold=share * 1.0001)
    # A /8 is under 1 % of the public IPv4 space, 8.0.0.0/5 (10/8 inside it is private) about 3 %.
    assert not reach.Reach.of(["8.0.0.0/8"]).is_world()
    r = reach.Reach.of(["8.0.0.0/5"])
    assert r.is_world()
    assert not r.is_world(threshold=0.5)
    assert reach.Reach.of(["8.0.0.0/8"]).is_world(threshold=share)


def test_exclude_and_intersect_across_versions():
    v4, v6 = ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("2001:db8::/32")
    assert reach.exclude([v6, v4], ["10.0.0.0/9"]) == [v6, ipaddress.ip_network("10.128.0.0/9")]
    assert reach.exclude([v4], [ipaddress.ip_network("10.0.0.0/8")]) == []
    # Another version first does not stop the walk.
    assert reach.intersect([v6, v4], ipaddress.ip_network("10.1.0.0/16")) == [ipaddress.ip_network("10.1.0.0/16")]
    assert reach.intersect([v6, ipaddress.ip_network("10.1.0.0/16")], v4) == [ipaddress.ip_network("10.1.0.0/16")]


# --- principals ----------------------------------------------------------------------------------------------


def test_analyse_names_each_key_on_its_side():
    verdict = principals.analyse(
        {
            "Null": "not a block",
            "StringEquals": {"aws:SourceAccount": "123456789012", "aws:SourceVpce": "${aws:SourceVpce}"},
            "Bool": {"aws:SecureTransport": "true"},
            "ForAnyValue:StringLike": {"aws:PrincipalOrgPaths": "o-abc/r-ab12/ou-ab12-11111111/*"},
        }
    )
    assert verdict.restricting == ("aws:SourceAccount",)
    assert verdict.ignored == ("aws:SourceVpce", "aws:SecureTransport", "aws:PrincipalOrgPaths")
    assert principals.analyse(None) == principals.ConditionVerdict((), ())
    # A block that is no mapping is skipped, and the keys after it are still read.
    after = principals.analyse({"StringEquals": [], "ArnEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:1:t"}})
    assert after.restricting == ("aws:SourceArn",)
    assert principals.analyse({"ForAnyValue:StringEquals": {"aws:PrincipalOrgID": "o-abc"}}).restricts


@pytest.mark.parametrize(
    ("key", "value", "restricts"),
    [
        ("aws:SourceAccount", "", False),
        ("aws:SourceAccount", "   ", False),
        ("aws:SourceAccount", None, False),
        ("aws:SourceAccount", "12345678901?", False),
        ("aws:SourceAccount", "123456789012", True),
        ("aws:userid", "AROAEXAMPLEID:*", False),
        ("aws:userid", "AROAEXAMPLEID:session", True),
        ("aws:SourceOwner", "*:123456789012", False),
        ("aws:PrincipalArn", "arn:aws:iam::123456789012:role/*", True),
        ("aws:SourceArn", "arn:aws:sns:us-east-1:123456789012:*", True),
        ("aws:SourceAccount", "arn:aws:sns:us-east-1:123456789012:*", False),  # wildcard only for ARN keys
        ("aws:SourceArn", "arn:aws:sns:us-east-1:*:topic", False),
        ("aws:SourceIp", "not-a-cidr", False),  # a typo must not read as a restriction
        ("aws:SourceIp", "198.51.100.0/24", False),  # under StringEquals: IpAddress only
    ],
)
def test_fixed_values_restrict(key, value, restricts):
    operator = "StringLike" if key != "aws:SourceArn" else "ArnLike"
    assert principals.analyse({operator: {key: value}}).restricts is restricts


def test_ip_conditions_need_the_ip_operator():
    assert principals.analyse({"IpAddress": {"aws:SourceIp": "198.51.100.0/24"}}).restricts
    assert not principals.analyse({"IpAddress": {"aws:SourceIp": ["198.51.100.0/24", "x"]}}).restricts


def test_operators():
    assert principals._operator("ForAnyValue:StringLike") == ("stringlike", True)
    assert principals._operator(" StringEqualsIfExists ") == ("stringequals", False)
    assert principals._operator("ForAllValues:StringEquals") == ("stringequals", False)
    assert principals._operator("StringNotEquals") == ("stringnotequals", False)


def test_principal_forms_that_are_not_everyone():
    assert not principals.principal_is_public(None)
    assert not principals.principal_is_public(["*"])  # not a Principal element's shape
    assert not principals.principal_is_public(" arn:aws:iam::1:root ")
    assert principals.principal_is_public(" * ")
    assert principals.principal_is_public({"AWS": " * "})


def test_oidc_providers_of_a_federated_principal():
    eks = "oidc.eks.us-east-1.amazonaws.com/id/ABC"
    federated = [
        f"arn:aws:iam::123456789012:oidc-provider/{eks}",
        "arn:aws:iam::123456789012:saml-provider/ADFS",
        "accounts.google.com",
        "cognito-identity.amazonaws.com",
        "arn:aws:iam::123456789012:role/not.a.provider",
        "localhost",
        "x.saml-provider/odd",
        42,
    ]
    assert principals._oidc_providers({"Federated": federated}) == [
        eks,
        "accounts.google.com",
        "cognito-identity.amazonaws.com",
    ]
    assert principals._oidc_providers("arn:aws:iam::123456789012:oidc-provider/x") == []


def _trust(federated, condition, action="sts:AssumeRoleWithWebIdentity", *, deny_first=False):
    statements = [{"Effect": "Deny", "Principal": "*", "Action": "*"}] if deny_first else []
    statements.append({"Effect": "Allow", "Principal": {"Federated": federated}, "Action": action})
    if condition is not None:
        statements[-1]["Condition"] = condition
    return {"Statement": statements}


def test_web_identity_findings_are_exact():
    eks = "oidc.eks.us-east-1.amazonaws.com/id/ABC"
    arn = f"arn:aws:iam::123456789012:oidc-provider/{eks}"
    [finding] = principals.public_statements(_trust(arn, None, deny_first=True))
    assert finding == principals.Finding(
        1,
        f"a web-identity trust of {eks} without a '{eks}:sub' condition: every identity the provider issues "
        "tokens for (every service account of the cluster) can assume it",
    )
    two = principals.public_statements(_trust([arn, "accounts.google.com"], None))
    assert two[0].why.startswith(f"a web-identity trust of {eks}, accounts.google.com without a '{eks}:sub'")
    for action in ("sts:*", "*", ["s3:GetObject", "sts:AssumeRoleWithWebIdentity"]):
        assert [f.index for f in principals.public_statements(_trust(arn, None, action))] == [0]
    assert principals.public_statements(_trust(arn, None, "sts:AssumeRole")) == []
    # Web-identity action without a web-identity provider: not this finding.
    aws_principal = {"Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::1:root"}, "Action": "*"}]}
    assert principals.public_statements(aws_principal) == []


@pytest.mark.parametrize(
    ("condition", "public"),
    [
        ("not a mapping", True),
        ({"StringNotEquals": {"P:sub": "repo:org/app:ref:refs/heads/main"}}, True),  # a negative operator
        ({"StringEquals": {"P:aud": "sts.amazonaws.com", "P:sub": "repo:org/app:ref:refs/heads/main"}}, False),
        ({"Bool": "x", "StringEquals": {"P:sub": "repo:org/app:ref:refs/heads/main"}}, False),
        ({"Null": {"P:sub": "false"}, "StringLike": {"P:sub": "repo:org/*"}}, False),
        ({"StringLike": {"P:sub": "*"}}, True),
        ({"StringLike": {"P:sub": "repo:*"}}, True),
        ({"StringLike": {"P:sub": "system:serviceaccount:*"}}, True),
        ({"StringLike": {"P:sub": ["repo:org/app:*", "repo:*"]}}, True),
        ({"StringLike": {"P:sub": [7]}}, True),
    ],
)
def test_sub_conditions(condition, public):
    provider = "token.actions.githubusercontent.com"
    cond = (
        {op: {k.replace("P:", f"{provider}:"): v for k, v in b.items()} if isinstance(b, dict) else b for op, b in c}
        if isinstance(condition, dict) and (c := condition.items())
        else condition
    )
    doc = _trust(f"arn:aws:iam::123456789012:oidc-provider/{provider}", cond)
    assert bool(principals.public_statements(doc)) is public


def test_cognito_identity_is_restricted_by_its_pool():
    cognito = "cognito-identity.amazonaws.com"
    pool = {"StringEquals": {f"{cognito}:aud": "us-east-1:12345678-1234-1234-1234-123456789012"}}
    assert principals.public_statements(_trust(cognito, pool)) == []
    assert (
        principals.public_statements(
            _trust(
                "COGNITO-IDENTITY.AMAZONAWS.COM",
                {"StringEquals": {f"{cognito}:aud": "us-east-1:12345678-1234-1234-1234-123456789012"}},
            )
        )
        == []
    )
    sub_only = {"StringEquals": {f"{cognito}:sub": "us-east-1:abc"}}
    assert [f.index for f in principals.public_statements(_trust(cognito, sub_only))] == [0]


def test_public_statement_messages():
    def doc(*statements):
        return {"Statement": list(statements)}

    public = {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage"}
    scoped = {**public, "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}}}
    loose = {**public, "Condition": {"Bool": {"aws:SecureTransport": "true"}, "StringLike": {"aws:UserAgent": "x"}}}
    not_principal = {"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::1:root"}, "Action": "*"}
    no_effect = {"Principal": "*", "Action": "*"}
    findings = principals.public_statements(doc(no_effect, scoped, loose, public, not_principal))
    assert findings == [
        principals.Finding(
            2, "Principal '*' under conditions that restrict nobody (aws:SecureTransport, aws:UserAgent)"
        ),
        principals.Finding(3, "Principal '*' without a condition"),
        principals.Finding(4, "NotPrincipal (everyone but those named) without a condition"),
    ]
    assert principals.public_statements(doc({**public, "Effect": " Allow "})) == [
        principals.Finding(0, "Principal '*' without a condition")
    ]


def test_documents_and_lists():
    assert principals.document('{"Statement": []}') == {"Statement": []}
    assert principals.document("[1]") is None
    assert principals.document("{nope") is None
    assert principals.document(7) is None
    assert principals.as_list(None) == []
    assert principals.as_list("a") == ["a"]
    assert principals.statements({"Statement": {"Effect": "Allow"}}) == [(0, {"Effect": "Allow"})]
    assert principals.statements({"Statement": ["x", {"Effect": "Deny"}]}) == [(1, {"Effect": "Deny"})]
    assert principals.statements(None) == []
    assert principals.public_principal_value(" * ", [])
    assert not principals.public_principal_value("*", ["sourceArn"])
    assert not principals.public_principal_value("s3.amazonaws.com", [])
