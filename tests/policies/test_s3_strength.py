"""The S3 stack policies (s3-tls-only, s3-sse-kms, s3-public-access-blocked) held to their exact verdicts and
messages: every statement shape the TLS reader accepts or refuses, every encryption rule shape, every flag of a
public access block, and which field an undecided bucket names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, stack_messages
from gpucloud.policies.gpucloud_policies.base import UNDECIDED_MARK, UndecidedError
from gpucloud.policies.gpucloud_policies.security.s3_tls import denies_plaintext

BUCKET = "aws:s3/bucket:Bucket"
BUCKET_V2 = "aws:s3/bucketV2:BucketV2"
POLICY = "aws:s3/bucketPolicy:BucketPolicy"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
LOGGING = "aws:s3/bucketLogging:BucketLogging"
LOGGING_V2 = "aws:s3/bucketLoggingV2:BucketLoggingV2"
FIX_UNKNOWN = (
    ". Fix: make the value known at preview (a literal, or derived from known inputs), or set this policy's "
    "unknowns to 'warn' for this environment."
)


def deny(**overrides: Any) -> dict[str, Any]:
    """The AWS-documented TLS-only statement (S3 user guide, "Enforce encryption in transit"), with overrides."""
    statement = {
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": ["arn:aws:s3:::b", "arn:aws:s3:::b/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    statement.update(overrides)
    return {k: v for k, v in statement.items() if v is not None}


def doc(*statements: Any) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


# ----------------------------------------------------------------------------------------------- s3-tls-only

TLS_FIX = (
    "has no bucket policy denying non-TLS access. Fix: add a BucketPolicy statement Deny, Principal '*', "
    "Action 's3:*', Condition Bool aws:SecureTransport 'false'."
)


@pytest.mark.parametrize(
    ("document", "denies"),
    [
        (doc(deny()), True),
        # A lone statement object (not a list) is valid IAM JSON.
        ({"Statement": deny()}, True),
        (doc(deny(Principal={"AWS": "*"})), True),
        (doc(deny(Principal={"AWS": ["arn:aws:iam::123456789012:root", "*"]})), True),
        (doc(deny(Action="*")), True),
        (doc(deny(Action=["s3:GetObject", "s3:*"])), True),
        (doc(deny(Condition={"Bool": {"aws:SecureTransport": False}})), True),
        (doc(deny(Condition={"Bool": {"aws:SecureTransport": "FALSE"}})), True),
        # The denying statement after others: every statement is read, not just the first.
        (doc({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}, "junk", deny()), True),
        (doc(deny(Effect="Allow")), False),
        (doc(deny(Effect=None)), False),
        (doc(deny(Principal={"AWS": "arn:aws:iam::123456789012:root"})), False),
        (doc(deny(Principal={"Service": "*"})), False),
        (doc(deny(Principal=None)), False),
        (doc(deny(Action="s3:GetObject")), False),
        (doc(deny(Action=["s3:GetObject", "s3:PutObject"])), False),
        (doc(deny(Condition={"Bool": {"aws:SecureTransport": "true"}})), False),
        (doc(deny(Condition={"Bool": {"aws:SecureTransport": True}})), False),
        (doc(deny(Condition=None)), False),
        (doc(deny(Condition="aws:SecureTransport=false")), False),
        (doc(deny(Condition={"Bool": "aws:SecureTransport"})), False),
        (doc(deny(Condition={"StringEquals": {"aws:SecureTransport": "false"}})), False),
        (doc(), False),
        ({}, False),
        ([deny()], False),
        (None, False),
        (json.dumps(doc(deny())), False),
    ],
)
def test_denies_plaintext_on_each_statement_shape(document: Any, denies: bool) -> None:
    assert denies_plaintext(document) is denies


def tls_bucket(name: str, policy: Any, *, inline: Any = None) -> list[Res]:
    props: dict[str, Any] = {"bucket": f"{name}-bucket"}
    if inline is not None:
        props["policy"] = inline
    out = [Res(BUCKET, name, props)]
    if policy is not None:
        out.append(Res(POLICY, f"{name}-policy", {"bucket": UNKNOWN, "policy": policy}, {"bucket": [name]}))
    return out


def test_tls_policy_reads_json_strings_documents_and_refuses_the_rest() -> None:
    resources = [
        *tls_bucket("json-string", json.dumps(doc(deny()))),
        *tls_bucket("document", doc(deny())),
        *tls_bucket("inline-string", None, inline=json.dumps(doc(deny()))),
        *tls_bucket("inline-document", None, inline=doc(deny())),
        *tls_bucket("not-json", "{"),
        *tls_bucket("a-list", [deny()]),
        *tls_bucket("allow-only", json.dumps(doc(deny(Effect="Allow")))),
        *tls_bucket("none", None),
    ]
    messages = stack_messages("s3-tls-only", resources)
    assert sorted(messages) == [(n, f"{n}: {TLS_FIX}") for n in ("a-list", "allow-only", "none", "not-json")]


def test_tls_policy_matches_a_policy_naming_the_bucket_literally() -> None:
    resources = [
        Res(BUCKET, "literal", {"bucket": "literal-bucket"}),
        Res(POLICY, "literal-policy", {"bucket": "literal-bucket", "policy": json.dumps(doc(deny()))}),
        Res(BUCKET, "other", {"bucket": "other-bucket"}),
    ]
    assert stack_messages("s3-tls-only", resources) == [("other", f"other: {TLS_FIX}")]


def test_tls_bucket_with_two_unknown_documents_names_the_first_one() -> None:
    # The bucket's own (inline) document is read before the attached ones; the first unknown is the one named.
    resources = [
        *tls_bucket("b", UNKNOWN, inline=UNKNOWN),
        Res(POLICY, "b-second", {"bucket": UNKNOWN, "policy": UNKNOWN}, {"bucket": ["b"]}),
    ]
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages("s3-tls-only", resources, None, found)
    assert found == []
    assert [(u.urn.rsplit("::", 1)[-1], u.field) for u in caught.value.undecided] == [("b", "b.policy")]


def test_tls_unknown_document_next_to_a_non_denying_one_stays_undecided() -> None:
    # A known document that does not deny plaintext must not hide the unknown one: the bucket is undecided
    # (blocked under 'block'), never reported as simply missing the policy.
    resources = [
        *tls_bucket("b", UNKNOWN, inline=json.dumps(doc(deny(Effect="Allow")))),
        Res(POLICY, "b-after", {"bucket": UNKNOWN, "policy": json.dumps(doc())}, {"bucket": ["b"]}),
    ]
    assert stack_messages("s3-tls-only", resources, {"unknowns": "block"}) == [
        (
            "b",
            f"b: {UNDECIDED_MARK}b-policy.policy): string value at .policy can't be known during preview" + FIX_UNKNOWN,
        )
    ]


# ------------------------------------------------------------------------------------------------ s3-sse-kms

KMS_FIX = (
    "is not encrypted with SSE-KMS and a customer-managed key (S3 defaults to SSE-S3). Fix: add a "
    "BucketServerSideEncryptionConfiguration with sse_algorithm 'aws:kms', kms_master_key_id and "
    "bucket_key_enabled True."
)
BUCKET_KEY_FIX = (
    "uses SSE-KMS without the S3 bucket key, so every object write is a KMS call. Fix: set bucket_key_enabled True."
)
LOG_FIX = (
    "receives S3 server access logs but has no SSE-S3 default encryption (log delivery cannot use SSE-KMS). "
    "Fix: add a BucketServerSideEncryptionConfiguration with sse_algorithm 'AES256'."
)
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def rule(algorithm: str | None = "aws:kms", key: Any = KEY, bucket_key: Any = True) -> dict[str, Any]:
    default: dict[str, Any] = {}
    if algorithm is not None:
        default["sseAlgorithm"] = algorithm
    if key is not None:
        default["kmsMasterKeyId"] = key
    out: dict[str, Any] = {"applyServerSideEncryptionByDefault": default}
    if bucket_key is not None:
        out["bucketKeyEnabled"] = bucket_key
    return out


def sse_bucket(name: str, *rules: dict[str, Any], type_: str = SSE, bucket_name: Any = None) -> list[Res]:
    bucket = Res(BUCKET, name, {"bucket": bucket_name or f"{name}-bucket"})
    return [bucket, Res(type_, f"{name}-sse", {"bucket": UNKNOWN, "rules": list(rules)}, {"bucket": [name]})]


def sse_messages(resources: list[Res], config: dict[str, Any] | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, message in stack_messages("s3-sse-kms", resources, config):
        assert name not in out, f"{name} reported twice"
        prefix = f"{name}: "
        assert message.startswith(prefix)
        out[name] = message[len(prefix) :]
    return out


def test_sse_kms_judges_each_rule_shape_with_its_exact_message() -> None:
    resources = [
        *sse_bucket("kms", rule()),
        *sse_bucket("dsse", rule("aws:kms:dsse")),
        *sse_bucket("v2-resource", rule(), type_=SSE_V2),
        *sse_bucket("computed-key", rule(key=UNKNOWN)),
        *sse_bucket("string-bucket-key", rule(bucket_key="true")),
        *sse_bucket("aes", rule("AES256", key=None)),
        *sse_bucket("no-algorithm", rule(None)),
        *sse_bucket("aws-managed-key", rule(key=None)),
        *sse_bucket("empty-key", rule(key="")),
        *sse_bucket("no-bucket-key", rule(bucket_key=None)),
        *sse_bucket("bucket-key-off", rule(bucket_key="false")),
        # The bucket key must be on a rule that is itself SSE-KMS with a key.
        *sse_bucket("bucket-key-on-the-wrong-rule", rule("AES256", key=None), rule(bucket_key=False)),
        # Any good rule among several decides.
        *sse_bucket("second-rule-good", rule("AES256", key=None), rule()),
        *sse_bucket("second-rule-has-the-key", rule(bucket_key=False), rule()),
        Res(BUCKET, "bare", {"bucket": "bare-bucket"}),
    ]
    assert sse_messages(resources) == {
        "aes": KMS_FIX,
        "no-algorithm": KMS_FIX,
        "aws-managed-key": KMS_FIX,
        "empty-key": KMS_FIX,
        "bare": KMS_FIX,
        "no-bucket-key": BUCKET_KEY_FIX,
        "bucket-key-off": BUCKET_KEY_FIX,
        "bucket-key-on-the-wrong-rule": BUCKET_KEY_FIX,
    }
    relaxed = sse_messages(resources, {"requireBucketKey": False})
    assert relaxed == dict.fromkeys(("aes", "no-algorithm", "aws-managed-key", "empty-key", "bare"), KMS_FIX)


def test_sse_kms_reads_inline_rules_on_bucket_and_bucket_v2() -> None:
    resources = [
        Res(BUCKET, "inline", {"serverSideEncryptionConfiguration": {"rule": rule()}}),
        Res(BUCKET, "inline-no-key", {"serverSideEncryptionConfiguration": {"rule": rule(bucket_key=None)}}),
        Res(
            BUCKET_V2,
            "inline-v2",
            {
                "serverSideEncryptionConfigurations": [
                    {
                        "rules": [
                            {
                                "applyServerSideEncryptionByDefaults": [
                                    {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY}
                                ],
                                "bucketKeyEnabled": True,
                            }
                        ]
                    }
                ]
            },
        ),
        # The inline rule and a separate resource together: the separate one brings the key.
        Res(BUCKET, "inline-aes", {"serverSideEncryptionConfiguration": {"rule": rule("AES256", key=None)}}),
        Res(SSE, "inline-aes-sse", {"bucket": UNKNOWN, "rules": [rule()]}, {"bucket": ["inline-aes"]}),
    ]
    assert sse_messages(resources) == {"inline-no-key": BUCKET_KEY_FIX}


def log_setup(*, logging_type: str = LOGGING, by_urn: bool = True, target_rules: tuple[Any, ...] = ()) -> list[Res]:
    target = sse_bucket("logs", *target_rules) if target_rules else [Res(BUCKET, "logs", {"bucket": "logs-bucket"})]
    props: dict[str, Any] = {"bucket": UNKNOWN, "targetBucket": UNKNOWN if by_urn else "logs-bucket"}
    deps = {"bucket": ["data"], **({"targetBucket": ["logs"]} if by_urn else {})}
    return [*sse_bucket("data", rule()), *target, Res(logging_type, "access-logs", props, deps)]


@pytest.mark.parametrize("logging_type", [LOGGING, LOGGING_V2])
@pytest.mark.parametrize("by_urn", [True, False])
def test_sse_kms_holds_a_log_target_to_sse_s3(logging_type: str, by_urn: bool) -> None:
    aes = (rule("AES256", key=None, bucket_key=None),)
    assert sse_messages(log_setup(logging_type=logging_type, by_urn=by_urn, target_rules=aes)) == {}
    assert sse_messages(log_setup(logging_type=logging_type, by_urn=by_urn)) == {"logs": LOG_FIX}
    # SSE-KMS on a log target breaks log delivery: flagged for that, never for missing the bucket key.
    kms = (rule(bucket_key=None),)
    assert sse_messages(log_setup(logging_type=logging_type, by_urn=by_urn, target_rules=kms)) == {"logs": LOG_FIX}


def test_sse_kms_reads_every_logging_resource_and_links_nothing_by_an_unknown_or_empty_name() -> None:
    aes = rule("AES256", key=None, bucket_key=None)
    resources = [
        *sse_bucket("data", rule()),
        *sse_bucket("by-urn", aes),
        *sse_bucket("by-name", aes),
        # Nameless buckets: an empty or unknown target name must not pick one of them as a log target.
        Res(BUCKET, "nameless", {}),
        Res(SSE, "nameless-sse", {"bucket": UNKNOWN, "rules": [aes]}, {"bucket": ["nameless"]}),
        Res(BUCKET, "computed-name", {"bucket": UNKNOWN}),
        Res(SSE, "computed-name-sse", {"bucket": UNKNOWN, "rules": [aes]}, {"bucket": ["computed-name"]}),
        Res(
            LOGGING,
            "first",
            {"bucket": UNKNOWN, "targetBucket": UNKNOWN},
            {"bucket": ["data"], "targetBucket": ["by-urn"]},
        ),
        Res(LOGGING, "second", {"bucket": UNKNOWN, "targetBucket": "by-name-bucket"}, {"bucket": ["data"]}),
        Res(LOGGING, "empty", {"bucket": UNKNOWN, "targetBucket": ""}, {"bucket": ["data"]}),
        Res(LOGGING, "unknown", {"bucket": UNKNOWN, "targetBucket": UNKNOWN}, {"bucket": ["data"]}),
    ]
    assert sse_messages(resources) == {"nameless": KMS_FIX, "computed-name": KMS_FIX}


@pytest.mark.parametrize(
    ("unknown_rule", "field"),
    [
        ({"applyServerSideEncryptionByDefault": UNKNOWN}, "rules.0.applyServerSideEncryptionByDefault"),
        (rule(algorithm=UNKNOWN), "rules.0.applyServerSideEncryptionByDefault.sseAlgorithm"),
        (rule(bucket_key=UNKNOWN), "rules.0.bucketKeyEnabled"),
    ],
)
def test_sse_kms_unknown_inside_a_separate_rule_names_that_resource(unknown_rule: Any, field: str) -> None:
    # The unknown sits on the separate configuration resource, not on the bucket: the report says so.
    resources = [*sse_bucket("a", unknown_rule), Res(BUCKET, "b", {"bucket": "b-bucket"})]
    assert stack_messages("s3-sse-kms", resources, {"unknowns": "block"}) == [
        ("b", f"b: {KMS_FIX}"),
        (
            "a",
            f"a: {UNDECIDED_MARK}a-sse.{field}): string value at .{field} can't be known during preview" + FIX_UNKNOWN,
        ),
    ]


def test_sse_kms_unknown_inline_rule_names_the_bucket_field() -> None:
    inline = {"serverSideEncryptionConfiguration": {"rule": rule(algorithm=UNKNOWN)}}
    resources = [Res(BUCKET, "a", inline), Res(SSE, "a-sse", {"bucket": UNKNOWN, "rules": [rule()]}, {"bucket": ["a"]})]
    field = "serverSideEncryptionConfiguration.rule.applyServerSideEncryptionByDefault.sseAlgorithm"
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages("s3-sse-kms", resources, None, found)
    assert found == []
    assert [(u.urn.rsplit("::", 1)[-1], u.field) for u in caught.value.undecided] == [("a", field)]


# ---------------------------------------------------------------------------------- s3-public-access-blocked

ALL_ON = {"blockPublicAcls": True, "blockPublicPolicy": True, "ignorePublicAcls": True, "restrictPublicBuckets": True}
NO_PAB = (
    "has no aws.s3.BucketPublicAccessBlock: public access is blocked only by S3's default for new buckets, which "
    "nothing in code keeps. Fix: add one for this bucket with block_public_acls, block_public_policy, "
    "ignore_public_acls and restrict_public_buckets True."
)


def pab_bucket(name: str, *blocks: dict[str, Any]) -> list[Res]:
    out = [Res(BUCKET, name, {"bucket": f"{name}-bucket"})]
    for i, flags in enumerate(blocks):
        out.append(Res(PAB, f"{name}-pab{i}", {"bucket": UNKNOWN, **flags}, {"bucket": [name]}))
    return out


def test_public_access_block_names_every_flag_left_off() -> None:
    resources = [
        *pab_bucket("all-on", ALL_ON),
        *pab_bucket("string-flags", dict.fromkeys(ALL_ON, "true")),
        *pab_bucket("none"),
        *pab_bucket("string-false", {**ALL_ON, "blockPublicPolicy": "false"}),
        *pab_bucket("two-off", {**ALL_ON, "restrictPublicBuckets": False, "ignorePublicAcls": None}),
        # Two blocks on one bucket: a flag off in either is reported, once.
        *pab_bucket(
            "split",
            {**ALL_ON, "blockPublicAcls": False},
            {**ALL_ON, "blockPublicAcls": False, "blockPublicPolicy": False},
        ),
        *pab_bucket("empty", {}),
    ]
    assert stack_messages("s3-public-access-block-explicit", resources) == [("none", f"none: {NO_PAB}")]
    assert stack_messages("s3-public-access-blocked", resources) == [
        (
            "string-false",
            "string-false: its public access block leaves ['blockPublicPolicy'] off. Fix: set all four flags to True.",
        ),
        (
            "two-off",
            "two-off: its public access block leaves ['ignorePublicAcls', 'restrictPublicBuckets'] off. "
            "Fix: set all four flags to True.",
        ),
        (
            "split",
            "split: its public access block leaves ['blockPublicAcls', 'blockPublicPolicy'] off. "
            "Fix: set all four flags to True.",
        ),
        (
            "empty",
            "empty: its public access block leaves ['blockPublicAcls', 'blockPublicPolicy', 'ignorePublicAcls', "
            "'restrictPublicBuckets'] off. Fix: set all four flags to True.",
        ),
    ]


def test_public_access_block_unknown_flag_is_undecided_for_its_bucket_only() -> None:
    resources = [*pab_bucket("a", {**ALL_ON, "restrictPublicBuckets": UNKNOWN}), *pab_bucket("b")]
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages("s3-public-access-blocked", resources, None, found)
    assert found == []
    assert stack_messages("s3-public-access-block-explicit", resources) == [("b", f"b: {NO_PAB}")]
    assert [(u.urn.rsplit("::", 1)[-1], u.field) for u in caught.value.undecided] == [
        ("a", "a-pab0.restrictPublicBuckets")
    ]


def test_sse_kms_unknown_algorithm_on_a_log_target_names_its_separate_resource() -> None:
    field = "rules.0.applyServerSideEncryptionByDefault.sseAlgorithm"
    resources = log_setup(target_rules=(rule(algorithm=UNKNOWN),))
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages("s3-sse-kms", resources, None, found)
    assert found == []
    assert [(u.urn.rsplit("::", 1)[-1], u.field) for u in caught.value.undecided] == [("logs", f"logs-sse.{field}")]
