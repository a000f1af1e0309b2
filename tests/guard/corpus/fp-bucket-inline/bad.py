"""Inline settings that are not enough: SSE-S3 (AES256) and a policy that only allows."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
b = aws.s3.Bucket(
    "inline",
    bucket="corpus-inline",
    server_side_encryption_configuration={
        "rule": {"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}
    },
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
                    "Action": "s3:GetObject",
                    "Resource": "arn:aws:s3:::corpus-inline/*",
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
