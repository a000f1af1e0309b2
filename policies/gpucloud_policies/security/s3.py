"""Shared matching of S3 bucket sub-resources to their bucket, by URN (the bucket ID is unknown at preview)."""

from __future__ import annotations

from pulumi_policy import PolicyResource

from ..base import get, has, text
from ..stack import linked, of_type

BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")


def buckets(resources: list[PolicyResource]) -> list[PolicyResource]:
    return of_type(resources, *BUCKETS)


def attached(resources: list[PolicyResource], bucket: PolicyResource, *types: str) -> list[PolicyResource]:
    """Sub-resources of ``types`` whose ``bucket`` input refers to ``bucket`` (by URN, or by literal name)."""
    name = text(get(bucket.props, "bucket")) if has(bucket.props, "bucket") else ""
    out = []
    for r in of_type(resources, *types):
        if any(d.urn == bucket.urn for d in linked(r, "bucket")) or (
            name and not linked(r, "bucket") and text(get(r.props, "bucket")) == name
        ):
            out.append(r)
    return out
