"""GC-SEC-156 s3-public-access-block-explicit: every bucket states its public access block in code.

A bucket created without an `aws.s3.BucketPublicAccessBlock` is blocked by S3's default for new buckets (all four
settings on since April 2023; s3-public-access-blocked judges a block that turns a flag off), but nothing in
the program keeps it so: a console change or an imported bucket created before 2023 would not show in review.
Advisory by default, because the bucket is not public; prod's config makes it mandatory as defence in depth.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding
from .s3 import buckets, children
from .s3_public_access import PAB


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    blocked = children(args.resources, PAB)
    for b in buckets(args.resources):
        with deciding(b):
            if not blocked.get(b.urn):
                report(
                    b.urn,
                    "has no aws.s3.BucketPublicAccessBlock: public access is blocked only by S3's default for new "
                    "buckets, which nothing in code keeps. Fix: add one for this bucket with block_public_acls, "
                    "block_public_policy, ignore_public_acls and restrict_public_buckets True.",
                )


GUARDRAIL = Guardrail(
    id="GC-SEC-156",
    name="s3-public-access-block-explicit",
    description="Every S3 bucket has an explicit public access block (beyond S3's default for new buckets).",
    category="security",
    severity=Severity.LOW,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Add aws.s3.BucketPublicAccessBlock(bucket=bucket.id, all four flags True) per bucket.",
    references=("CKV2_AWS_6", "SH S3.8", "AWS S3 User Guide: Block Public Access settings for new buckets (2023)"),
    kind="stack",
    surfaces=frozenset({"network"}),
    reads=frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", PAB}),
    validate=validate,
)
