"""GC-SEC-019 s3-public-access-blocked: every bucket has a public access block with all four flags on."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, truthy, via
from .s3 import attached, buckets

PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    for b in buckets(args.resources):
        with deciding(b):
            _check(args.resources, b, report)


def _check(resources: list[Any], b: Any, report: StackReport) -> None:
    blocks = attached(resources, b, PAB)
    if not blocks:
        report(
            b.urn,
            "has no aws.s3.BucketPublicAccessBlock. Fix: add one for this bucket with "
            "block_public_acls, block_public_policy, ignore_public_acls and restrict_public_buckets True.",
        )
        return
    off: set[str] = set()
    for pab in blocks:
        with via(pab):
            off.update(f for f in FLAGS if not truthy(get(pab.props, f)))
    if off:
        report(b.urn, f"its public access block leaves {sorted(off)} off. Fix: set all four flags to True.")


GUARDRAIL = Guardrail(
    id="GC-SEC-019",
    name="s3-public-access-blocked",
    description="Every S3 bucket must have a public access block with all four flags enabled.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Add aws.s3.BucketPublicAccessBlock(bucket=bucket.id, all four flags True) per bucket, and "
    "an account-level aws.s3.AccountPublicAccessBlock.",
    references=(
        "CKV_AWS_53",
        "CKV_AWS_54",
        "CKV_AWS_55",
        "CKV_AWS_56",
        "CKV2_AWS_6",
        "AWS-0086",
        "AWS-0087",
        "AWS-0091",
        "AWS-0093",
        "AWS-0094",
        "SH S3.1",
        "SH S3.8",
        "SH S3.2",
        "SH S3.3",
    ),
    kind="stack",
    surfaces=frozenset({"network"}),
    reads=frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", PAB}),
    validate=validate,
)
