"""GC-SEC-022 s3-tls-only: bucket policies deny requests without TLS (aws:SecureTransport false)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, get, plain
from . import s3_inline
from .s3 import attached, buckets

POLICY = "aws:s3/bucketPolicy:BucketPolicy"


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def denies_plaintext(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    for st in _as_list(doc.get("Statement")):
        if not isinstance(st, dict) or st.get("Effect") != "Deny":
            continue
        principal = st.get("Principal")
        anyone = principal == "*" or (isinstance(principal, dict) and "*" in _as_list(principal.get("AWS")))
        actions = _as_list(st.get("Action"))
        cond = st.get("Condition")
        bool_cond = cond.get("Bool") if isinstance(cond, dict) else None
        secure = bool_cond.get("aws:SecureTransport") if isinstance(bool_cond, dict) else None
        if anyone and ("s3:*" in actions or "*" in actions) and str(secure).lower() == "false":
            return True
    return False


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    for b in buckets(args.resources):
        docs = []
        raws = [get(p.props, "policy") for p in attached(args.resources, b, POLICY)] + [s3_inline.policy(b)]
        for raw in raws:
            if isinstance(raw, str):
                try:
                    docs.append(json.loads(raw))
                except ValueError:
                    continue
            elif isinstance(raw, Mapping):
                docs.append(plain(raw))
        if not any(denies_plaintext(d) for d in docs):
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
    validate=validate,
)
