"""GC-SEC-021 s3-sse-kms: buckets default to SSE-KMS with a key and the bucket key (cheaper checkpoint churn)."""

from __future__ import annotations

import contextlib
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
    maps,
    text,
    truthy,
    via,
)
from ..readers import keys
from ..stack import linked, of_type
from . import s3_inline
from .s3 import attached, buckets

SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
LOGGING = ("aws:s3/bucketLogging:BucketLogging", "aws:s3/bucketLoggingV2:BucketLoggingV2")


def _log_targets(resources: list[Any]) -> set[str]:
    """URNs of buckets that receive S3 server access logs: log delivery writes only with SSE-S3, so SSE-KMS
    would break it (the AWS logging docs say so); those buckets are held to SSE-S3 instead."""
    names = {_known(b.props, "bucket"): b.urn for b in buckets(resources)}
    targets: set[str] = set()
    for logging in of_type(resources, *LOGGING):
        deps = linked(logging, "targetBucket")
        if deps:
            targets.update(d.urn for d in deps)
            continue
        literal = _known(logging.props, "targetBucket")
        if literal and literal in names:
            targets.add(names[literal])
    return targets


def _known(props: Any, key: str) -> str:
    # An unknown name links nothing by name; it must not stop the policy for every other bucket.
    try:
        return text(get(props, key))
    except UnknownValueError:
        return ""


def _rules(resources: list[Any], b: Any) -> list[tuple[Any, Any]]:
    """Default-encryption rules of a bucket: inline on aws.s3.Bucket (``serverSideEncryptionConfiguration.rule``;
    BucketV2's ``serverSideEncryptionConfigurations[].rules[]``) and from the separate resources, each with the
    separate resource it comes from (None inline), so an unknown read inside a rule later names that resource."""
    # Inline forms (Bucket's single rule, BucketV2's lists) normalised to the separate resource's rule shape.
    rules: list[tuple[Any, Any]] = [(None, r) for r in s3_inline.sse_rules(b)]
    for c in attached(resources, b, SSE, SSE_V2):
        with via(c):
            rules.extend((c, r) for r in maps(get(c.props, "rules")))
    return rules


def _read(source: Any, rule: Any, *path: str) -> Any:
    with via(source) if source is not None else contextlib.nullcontext():
        return get(rule, *path)


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    log_targets = _log_targets(args.resources)
    for b in buckets(args.resources):
        with deciding(b):
            _check(_rules(args.resources, b), b, b.urn in log_targets, report, cfg)


def _check(rules: list[tuple[Any, Any]], b: Any, log_target: bool, report: StackReport, cfg: Config) -> None:
    if log_target:
        algorithms = {text(_read(s, r, "applyServerSideEncryptionByDefault", "sseAlgorithm")) for s, r in rules}
        if "AES256" not in algorithms:
            report(
                b.urn,
                "receives S3 server access logs but has no SSE-S3 default encryption (log delivery cannot "
                "use SSE-KMS). Fix: add a BucketServerSideEncryptionConfiguration with sse_algorithm 'AES256'.",
            )
        return
    good = [
        (s, r)
        for s, r in rules
        if text(_read(s, r, "applyServerSideEncryptionByDefault", "sseAlgorithm")) in ("aws:kms", "aws:kms:dsse")
        and keys.customer_managed(_read(s, r, "applyServerSideEncryptionByDefault"), "kmsMasterKeyId")
    ]
    if not good:
        report(
            b.urn,
            "is not encrypted with SSE-KMS and a customer-managed key (S3 defaults to SSE-S3). "
            "Fix: add a BucketServerSideEncryptionConfiguration with sse_algorithm 'aws:kms', "
            "kms_master_key_id and bucket_key_enabled True.",
        )
    elif cfg["requireBucketKey"] and not any(truthy(_read(s, r, "bucketKeyEnabled")) for s, r in good):
        report(
            b.urn,
            "uses SSE-KMS without the S3 bucket key, so every object write is a KMS call. "
            "Fix: set bucket_key_enabled True.",
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-021",
    name="s3-sse-kms",
    description="S3 buckets must use SSE-KMS with a customer-managed key and the bucket key enabled.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Add aws.s3.BucketServerSideEncryptionConfiguration with sseAlgorithm aws:kms, "
    "kmsMasterKeyId and bucketKeyEnabled.",
    references=("CKV_AWS_19", "CKV_AWS_145", "AWS-0088", "AWS-0132", "SH S3.17"),
    kind="stack",
    surfaces=frozenset({"data"}),
    reads=frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", SSE, SSE_V2, *LOGGING}),
    validate=validate,
    config={
        "requireBucketKey": {"type": "boolean", "default": True, "description": "Require bucketKeyEnabled."},
    },
)
