"""SSE-KMS, but with the AWS-managed key alias: not a customer-managed key."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"

bucket = aws.s3.Bucket("datasets", bucket="corpus-datasets-prod", tags=TAGS, opts=KEEP)
aws.s3.BucketPublicAccessBlock(
    "datasets-pab",
    bucket=bucket.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
aws.s3.BucketServerSideEncryptionConfiguration(
    "datasets-sse",
    bucket=bucket.id,
    rules=[
        {
            "apply_server_side_encryption_by_default": {
                "sse_algorithm": "aws:kms",
                "kms_master_key_id": "alias/aws/s3",
            },
            "bucket_key_enabled": True,
        }
    ],
)
aws.s3.BucketPolicy(
    "datasets-tls",
    bucket=bucket.id,
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyPlaintext",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": ["arn:aws:s3:::corpus-datasets-prod", "arn:aws:s3:::corpus-datasets-prod/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    ),
)
