"""The good twin of data-s3-inline-sse-s3."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

# The platform data key, created and rotated by the platform stack.
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"

bucket = aws.s3.Bucket(
    "checkpoints",
    bucket="corpus-checkpoints-prod",
    server_side_encryption_configuration={
        "rule": {
            "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": KEY_ARN},
            "bucket_key_enabled": True,
        }
    },
    versioning={"enabled": True},
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": ["arn:aws:s3:::corpus-checkpoints-prod", "arn:aws:s3:::corpus-checkpoints-prod/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    ),
    tags=TAGS,
    opts=KEEP,
)
aws.s3.BucketPublicAccessBlock(
    "checkpoints-pab",
    bucket=bucket.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
