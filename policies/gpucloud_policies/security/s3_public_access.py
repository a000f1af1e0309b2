"""GC-SEC-019 s3-public-access-blocked: no bucket's public access block turns a flag off.

Since April 2023 S3 turns all four Block Public Access settings on for every new bucket (and disables ACLs), so a
bucket the program creates without an `aws.s3.BucketPublicAccessBlock` is blocked by AWS's own default: saying
its public access is "not blocked" would be false. What does open a bucket is a public access block that turns a
flag off; that is this policy's finding. Keeping the block explicit in code, so that a later change is visible in
review, is the separate, advisory s3-public-access-block-explicit (GC-SEC-156; mandatory in prod's config).
"""

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
    off: set[str] = set()
    for pab in blocks:
        with via(pab):
            off.update(f for f in FLAGS if not truthy(get(pab.props, f)))
    if off:
        report(b.urn, f"its public access block leaves {sorted(off)} off. Fix: set all four flags to True.")


GUARDRAIL = Guardrail(
    id="GC-SEC-019",
    name="s3-public-access-blocked",
    description="No S3 bucket's public access block turns a flag off (new buckets block all four by default).",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set all four flags of the bucket's aws.s3.BucketPublicAccessBlock to True (or delete it: "
    "a new bucket blocks all four by default), and add an account-level aws.s3.AccountPublicAccessBlock.",
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
