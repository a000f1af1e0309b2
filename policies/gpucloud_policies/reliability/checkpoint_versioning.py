"""GC-REL-048 checkpoint-bucket: checkpoint buckets keep versions (a bad write must not lose the last good one)."""

from __future__ import annotations

import re
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, tags_of, text, via
from ..security import s3_inline
from ..security.s3 import attached, buckets

VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
VERSIONING_V2 = "aws:s3/bucketVersioningV2:BucketVersioningV2"


def _is_checkpoint(bucket: Any, pattern: re.Pattern[str], tag_key: str) -> bool:
    tags = tags_of(bucket.props)
    if tags.get(tag_key, "").lower() in ("checkpoint", "checkpoints"):
        return True
    return bool(pattern.search(bucket.name) or pattern.search(text(get(bucket.props, "bucket"))))


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    pattern = re.compile(str(cfg["namePattern"]), re.IGNORECASE)
    for b in buckets(args.resources):
        with deciding(b):
            _check(args.resources, b, pattern, str(cfg["purposeTagKey"]), report)


def _check(resources: list[Any], b: Any, pattern: re.Pattern[str], tag_key: str, report: StackReport) -> None:
    enabled = False
    for v in attached(resources, b, VERSIONING, VERSIONING_V2):
        with via(v):
            enabled = enabled or text(get(v.props, "versioningConfiguration", "status")) == "Enabled"
    # Inline `versioning` (Bucket) / `versionings` (BucketV2): deprecated, still accepted by the provider.
    # A versioned bucket passes whatever its (possibly computed) name: decided before the name is read.
    if not enabled and not s3_inline.versioning_enabled(b) and _is_checkpoint(b, pattern, tag_key):
        report(
            b.urn,
            "is a checkpoint bucket without versioning, so an overwritten or deleted checkpoint is "
            "gone. Fix: add aws.s3.BucketVersioning with status 'Enabled' (and lifecycle rules expiring "
            "noncurrent versions).",
        )


GUARDRAIL = Guardrail(
    id="GC-REL-048",
    name="checkpoint-bucket-versioning",
    description="Checkpoint buckets must have versioning enabled.",
    category="reliability",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Add aws.s3.BucketVersioning(status Enabled) and a lifecycle rule with "
    "noncurrentVersionExpiration and abortIncompleteMultipartUpload.",
    references=("CKV_AWS_21", "AWS-0090", "SH S3.13"),
    kind="stack",
    validate=validate,
    config={
        "namePattern": {
            "type": "string",
            "default": "checkpoint|ckpt",
            "description": "Regex on the resource or bucket name marking checkpoint buckets.",
        },
        "purposeTagKey": {
            "type": "string",
            "default": "Purpose",
            "description": "Tag whose value 'checkpoints' marks a checkpoint bucket.",
        },
    },
)
