"""SSE-KMS and the TLS-deny policy written inline on aws.s3.Bucket (the pre-v7 style pulumi-aws still takes)."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
# Retained with the data it encrypts (GC-REL-102).
key = aws.kms.Key("key", enable_key_rotation=True, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
b = aws.s3.Bucket(
    "inline",
    bucket="corpus-inline",
    server_side_encryption_configuration={
        "rule": {
            "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": key.arn},
            "bucket_key_enabled": True,
        }
    },
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": ["arn:aws:s3:::corpus-inline", "arn:aws:s3:::corpus-inline/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    ),
    tags=TAGS,
    opts=pulumi.ResourceOptions(retain_on_delete=True),
)
aws.s3.BucketPublicAccessBlock(
    "inline-pab",
    bucket=b.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
