"""GC-SEC-022 s3-tls-only: bucket policies deny requests without TLS (aws:SecureTransport false).

The deny counts when it covers everyone (the principal reader's notion of a public principal), every S3 action,
and the objects as well as the bucket: a ``Resource`` of the bucket ARN alone (no ``/*``) leaves every
GetObject/PutObject over plain HTTP allowed (the S3 user guide's example policy for aws:SecureTransport lists
both ``arn:aws:s3:::bucket`` and ``arn:aws:s3:::bucket/*``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    UnknownValueError,
    deciding,
    get,
    has,
    plain,
    via,
)
from ..readers import principals
from .s3 import attached, buckets

POLICY = "aws:s3/bucketPolicy:BucketPolicy"


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def covers_objects(st: dict[str, Any]) -> bool:
    """The statement's Resource reaches the objects of a bucket (``*``, ``arn:...:bucket/*``, ``.../prefix*``
    wildcards ending the ARN); a ``NotResource`` deny is read as not covering them (fail closed)."""
    if "Resource" not in st:
        return False
    for r in _as_list(st.get("Resource")):
        if not isinstance(r, str):
            # A computed ARN (Output.concat) is read as written: a plain string only.
            continue
        v = r.strip()
        if v == "*" or v.endswith("/*") or (v.startswith("arn:") and v.endswith("*") and ":::" in v):
            return True
    return False


def denies_plaintext(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    for st in _as_list(doc.get("Statement")):
        if not isinstance(st, dict) or st.get("Effect") != "Deny":
            continue
        anyone = principals.principal_is_public(st.get("Principal"))
        if not covers_objects(st):
            continue
        actions = _as_list(st.get("Action"))
        cond = st.get("Condition")
        bool_cond = cond.get("Bool") if isinstance(cond, dict) else None
        secure = bool_cond.get("aws:SecureTransport") if isinstance(bool_cond, dict) else None
        if anyone and ("s3:*" in actions or "*" in actions) and str(secure).lower() == "false":
            return True
    return False


def _document(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return None
    return plain(raw) if isinstance(raw, Mapping) else None


def _denies(resource: Any) -> bool:
    """Whether the ``policy`` input of a bucket (inline, the deprecated v6 form still accepted by pulumi-aws 7)
    or of a BucketPolicy denies plaintext; an unknown document raises, naming that resource's field."""
    if not has(resource.props, "policy"):
        return False
    with via(resource):
        raw = get(resource.props, "policy")
    return denies_plaintext(_document(raw))


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    for b in buckets(args.resources):
        with deciding(b):
            _check(args.resources, b, report)


def _check(resources: list[Any], b: Any, report: StackReport) -> None:
    # One known denying document decides the bucket even when another of its documents is unknown.
    pending: UnknownValueError | None = None
    for holder in (b, *attached(resources, b, POLICY)):
        try:
            if _denies(holder):
                return
        except UnknownValueError as exc:
            pending = pending or exc
    if pending is not None:
        raise pending
    report(
        b.urn,
        "has no bucket policy denying non-TLS access. Fix: add a BucketPolicy statement Deny, "
        "Principal '*', Action 's3:*', Condition Bool aws:SecureTransport 'false'.",
    )


GUARDRAIL = Guardrail(
    id="GC-SEC-022",
    name="s3-tls-only",
    description="S3 bucket policies must deny requests that do not use TLS.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Attach a BucketPolicy with a Deny on s3:* for Principal * when aws:SecureTransport is "
    "false (optionally also s3:TlsVersion < 1.2).",
    references=("SH S3.5", "CKV_AWS_379"),
    kind="stack",
    surfaces=frozenset({"principal"}),
    reads=frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", POLICY}),
    validate=validate,
)
