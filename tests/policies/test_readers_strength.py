"""Exact values of the shared readers (policies/gpucloud_policies/readers): reach and principals.

Written against the mutants `scripts/mutation.py` left alive (docs/performance.md, "Mutation score of the readers
and the guardrails"): each test names the value a reader must return, so a changed operator, constant or branch
fails it.
"""

from __future__ import annotations

import base64
import gzip
import ipaddress

import pytest

from gpucloud.policies.gpucloud_policies.readers import principals, reach, secrets

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


# --- secrets -------------------------------------------------------------------------------------------------

GH = "ghp_" + "Zq8xK2mN4pR7sT1vW3yB5dF6hJ9kL0cA2eG4"


def b64(s: str | bytes) -> str:
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def test_entropy_values():
    assert secrets.entropy("") == 0.0
    assert secrets.entropy("ab") == 1.0
    assert secrets.entropy("aabb") == 1.0
    assert secrets.entropy("aab") == pytest.approx(0.9182958, abs=1e-6)


def test_whole_value_base64():
    assert secrets._b64("QUJDREVGR0hJSktM") == b"ABCDEFGHIJKL"  # 16 characters: the shortest decoded
    assert secrets._b64("QUJD REVG\nR0hJ SktM") == b"ABCDEFGHIJKL"  # wrapped lines
    assert secrets._b64("QUJDREVGR0hJSk=") is None  # 15
    assert secrets._b64("QUJDREVGR0hJSktMT") is None  # not a multiple of 4
    assert secrets._b64("QUJDREVGR0hJSk!M") is None
    assert secrets._b64_bytes(b"QUJD\nREVG") == b"ABCDEF"
    assert secrets._b64_bytes(b"QUI") == b"AB"  # padding restored
    assert secrets._b64_bytes(b"QU") == b"A"
    assert secrets._b64_bytes(b"QUJD!") is None  # validated: '!' is not skipped over (that would read b"ABC")
    assert secrets._b64("QUJDREVGR0hJ") is None  # 12 characters: too short to be read as encoded


def test_gunzip_is_bounded():
    bomb = gzip.compress(b"\0" * (2 * secrets.MAX_BYTES), mtime=0)
    out = secrets._gunzip(bomb)
    assert out is not None and len(out) == secrets.MAX_BYTES
    assert secrets._gunzip(b"\x1f\x8bnot gzip") is None
    assert secrets._gunzip(b"plain") is None


def test_text_needs_95_percent_printable():
    assert secrets._text(b"") is None
    assert secrets._text(b"a" * 19 + b"\x01") is None  # exactly 95 %: not more
    assert secrets._text(b"a" * 39 + b"\x01") == "a" * 39 + "\x01"
    assert secrets._text(b"a\n\r\t" * 5) == "a\n\r\t" * 5
    assert secrets._text(b"\xff\xfe") is None


def test_layers_are_named_and_depth_bounded():
    assert list(secrets.layers("")) == []
    inner = f"T={GH}"
    assert list(secrets.layers(b64(inner))) == [("as written", b64(inner)), ("base64", inner)]
    deep = inner
    for _ in range(secrets.MAX_DEPTH):
        deep = b64(deep)
    assert [f.layer for f in secrets.tokens(deep)] == [" > ".join(["base64"] * secrets.MAX_DEPTH)]
    assert secrets.tokens(b64(deep)) == []  # one layer past MAX_DEPTH is not read
    gz = b64(gzip.compress(inner.encode(), mtime=0))
    # gzip costs a level of its own: four base64 layers around it are read, five are not.
    wrapped = gz
    for _ in range(4):
        wrapped = b64(wrapped)
    assert [f.layer for f in secrets.tokens(wrapped)] == [" > ".join(["base64"] * 5) + " > gzip"]
    assert secrets.tokens(b64(wrapped)) == []
    assert [layer for layer, _ in secrets.layers(gz)] == ["as written", "base64 > gzip"]
    assert secrets.tokens(b64(gz))[0].layer == "base64 > base64 > gzip"


def _mime(body: str, *, preamble: str = "") -> str:
    return (
        f'{preamble}Content-Type: multipart/mixed; boundary="B"\nMIME-Version: 1.0\n\n--B\n'
        "Content-Type: text/plain\n\nhello\n--B\nContent-Type: text/x-shellscript\n"
        f"Content-Transfer-Encoding: base64\n\n{b64(body)}\n--B--\n"
    )


def test_mime_parts_are_named_where_they_are():
    assert [f.layer for f in secrets.tokens(_mime(f"echo {GH}"))] == ["MIME part 2"]
    assert [f.layer for f in secrets.tokens(b64(_mime(f"echo {GH}")))] == ["base64 > MIME part 2"]
    # Leading blank lines end the headers (email.message_from_string, as cloud-init parses user data): not
    # MIME, and the part's base64 run is still decoded.
    assert [f.layer for f in secrets.tokens("\n\n" + _mime(f"echo {GH}"))] == ["embedded base64"]
    # A MIME-Version header first is MIME too, with the Content-Type past the first 200 characters.
    late = (
        f"MIME-Version: 1.0\nX-Note: {'n' * 220}\n"
        f'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Transfer-Encoding: base64\n\n'
        f"{b64('echo ' + GH)}\n--B--\n"
    )
    assert [f.layer for f in secrets.tokens(late)] == ["MIME part 1"]
    # A Content-Type alone (no MIME-Version header) is MIME too.
    bare = _mime(f"echo {GH}").replace("MIME-Version: 1.0\n", "")
    assert [f.layer for f in secrets.tokens(bare)] == ["MIME part 2"]
    # Not multipart: no MIME layer, the embedded base64 run is still decoded.
    single = f"MIME-Version: 1.0\nContent-Type: text/plain\n\n{b64('echo ' + GH)}\n"
    assert [f.layer for f in secrets.tokens(single)] == ["embedded base64"]


def test_cloud_config_write_files():
    gz = b64(gzip.compress(f"T={GH}".encode(), mtime=0))
    doc = (
        "#cloud-config\nwrite_files:\n- not a mapping\n- path: /etc/none\n- path: /etc/bad\n  encoding: b64\n"
        "  content: '!!!'\n- path: /etc/plain\n  content: hello\n- content: " + f"T={GH}" + "\n"
        "- path: /etc/b.env\n  encoding: GZ+B64\n  content: " + gz + "\n"
    )
    layers = [layer for layer, _ in secrets.layers(doc)]
    assert layers == [
        "as written",
        "write_files[3] /etc/plain",
        "write_files[4]",
        "write_files[5] /etc/b.env",
        "embedded base64 > gzip",  # the same run, decoded where it is written too
    ]
    nested = [layer for layer, _ in secrets.layers(b64(doc))]
    assert nested[:3] == ["as written", "base64", "base64 > write_files[3] /etc/plain"]
    assert secrets.tokens(b64(doc))[0].layer == "base64"  # the token is in the document as written too
    only_gz = f"#cloud-config\nwrite_files:\n- path: /etc/b.env\n  encoding: ' gzip+base64 '\n  content: {gz}\n"
    assert [f.layer for f in secrets.tokens(only_gz)] == ["write_files[0] /etc/b.env"]
    # An unknown encoding is read as written.
    assert [layer for layer, _ in secrets.layers("#cloud-config\nwrite_files:\n- {content: x, encoding: zz}")] == [
        "as written",
        "write_files[0]",
    ]
    assert list(secrets.layers("#cloud-config\n[1, 2")) == [("as written", "#cloud-config\n[1, 2")]
    # A two-step encoding whose first step fails ends that entry only.
    broken = (
        "#cloud-config\nwrite_files:\n- path: /etc/x\n  encoding: gz+b64\n  content: '!!!'\n"
        f"- path: /etc/y\n  content: {GH}\n"
    )
    assert [layer for layer, _ in secrets.layers(broken)] == ["as written", "write_files[1] /etc/y"]


def test_scan_assignments():
    [f] = secrets.scan("X_API_KEY = 'Zx9kQ2mP7vL4nR8sT1wY'")
    assert f == secrets.Finding("a high-entropy value assigned to X_API_KEY", "as written", False)
    assert secrets.scan("PASSWORD=Zx9kQ2mP7vL4nR8sT1wY", entropy_bits=5.0) == []
    two = secrets.scan("DB_PASSWORD=Zx9kQ2mP7vL4nR8sT1wY\nAPI_TOKEN=Qm3vT8xL2pK9nR4sW7yZ")
    assert [f.what for f in two] == [
        "a high-entropy value assigned to DB_PASSWORD",
        "a high-entropy value assigned to API_TOKEN",
    ]
    value = "Zx9kQ2mP7vL4nR8sT1wY"
    assert secrets.scan(f"PASSWORD={value}", entropy_bits=secrets.entropy(value)) != []  # inclusive
    assert secrets.scan("PASSWORD=ZxkQmPvLnRsTwYabcdef") == []  # letters only: a word, not a literal
    assert secrets.scan("PASSWORD=1234567890123456789") == []  # digits only
    for ref in ("arn:aws:ssm:us-east-1:1:x9", "https://vault/x9y8z7w6", "/run/secrets/x9y8z7w6q", "ssm:/a/b9c8d7e6"):
        assert secrets.scan(f"TOKEN={ref}") == [], ref
    # A layer with a token reports the token only; another layer's assignment is still reported.
    assert [(f.what, f.token) for f in secrets.scan(f"TOKEN={GH} PASSWORD=Zx9kQ2mP7vL4nR8sT1wY")] == [
        ("a GitHub token", True)
    ]
    assert secrets.scan(None) == [] and secrets.scan("") == [] and secrets.scan(123) == []
    # Two kinds of token, in two layers: both reported, each at its layer (a token layer does not end the walk).
    npm = "npm_" + "x7Kq2NmP9rT4vW1yZ3bC5dF6hJ9kL0cA2eG4"
    two = secrets.tokens(f"T={GH}\necho {b64('N=' + npm)} | base64 -d")
    assert [(f.what, f.layer) for f in two] == [("a GitHub token", "as written"), ("an npm token", "embedded base64")]
    # An embedded run inside a decoded layer names both.
    assert [f.layer for f in secrets.tokens(b64(f"echo {b64('T=' + GH)} | base64 -d"))] == ["base64 > embedded base64"]
    both = secrets.scan(f"PASSWORD=Zx9kQ2mP7vL4nR8sT1wY\necho {b64('T=' + GH)} | base64 -d")
    assert [(f.what, f.layer) for f in both] == [
        ("a high-entropy value assigned to PASSWORD", "as written"),
        ("a GitHub token", "embedded base64"),
    ]
    assert secrets.describe(both) == (
        "a high-entropy value assigned to PASSWORD (as written); a GitHub token (embedded base64)"
    )
