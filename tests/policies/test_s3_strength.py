"""The S3 stack policies (s3-tls-only, s3-sse-kms, s3-public-access-blocked) held to their exact verdicts and
messages: every statement shape the TLS reader accepts or refuses, every encryption rule shape, every flag of a
public access block, and which field an undecided bucket names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, stack_messages
from policies.gpucloud_policies.base import UNDECIDED_MARK, UndecidedError
from policies.gpucloud_policies.security.s3_tls import denies_plaintext

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
