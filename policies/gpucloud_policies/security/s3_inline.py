"""Settings written inline on the bucket resource, in the shape of their separate resources.

pulumi-aws 7.51 still accepts (deprecated) inline settings: ``aws.s3.Bucket`` takes
``server_side_encryption_configuration.rule`` (one rule), ``versioning`` and ``policy`` (a string or a document);
``aws.s3.BucketV2`` takes ``server_side_encryption_configurations[].rules[].apply_server_side_encryption_by_defaults[]``
(lists), ``versionings[]`` and ``policy``. The S3 policies read these next to the separate resources, so a bucket
configured either way is judged the same.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import PolicyResource

from ..base import get, maps, truthy

BUCKET_V2 = "aws:s3/bucketV2:BucketV2"


def sse_rules(bucket: PolicyResource) -> list[dict[str, Any]]:
    """Inline default-encryption rules as {"applyServerSideEncryptionByDefault": ..., "bucketKeyEnabled": ...}."""
    p = bucket.props
    if bucket.resource_type == BUCKET_V2:
        return [
            {"applyServerSideEncryptionByDefault": d, "bucketKeyEnabled": get(r, "bucketKeyEnabled")}
            for c in maps(get(p, "serverSideEncryptionConfigurations"))
            for r in maps(get(c, "rules"))
            for d in maps(get(r, "applyServerSideEncryptionByDefaults"))
        ]
    rule = get(p, "serverSideEncryptionConfiguration", "rule")
    if rule is None:
        return []
    return [
        {
            "applyServerSideEncryptionByDefault": get(rule, "applyServerSideEncryptionByDefault"),
            "bucketKeyEnabled": get(rule, "bucketKeyEnabled"),
        }
    ]


def policy(bucket: PolicyResource) -> Any:
    """The inline bucket policy (a JSON string or a document), or None."""
    return get(bucket.props, "policy")


def versioning_enabled(bucket: PolicyResource) -> bool:
    if bucket.resource_type == BUCKET_V2:
        return any(truthy(get(v, "enabled")) for v in maps(get(bucket.props, "versionings")))
    return truthy(get(bucket.props, "versioning", "enabled"))
