"""The only 'TLS' bucket policy is computed from a KMS key's ARN (unknown until apply) and in truth allows
everything: it must not pass as a TLS-deny policy."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
# Retained with the data it encrypts (GC-REL-102).
key = aws.kms.Key("key", enable_key_rotation=True, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
b = aws.s3.Bucket("data", bucket="corpus-data", tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
aws.s3.BucketPublicAccessBlock(
    "data-pab",
    bucket=b.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
aws.s3.BucketServerSideEncryptionConfiguration(
    "data-sse",
    bucket=b.id,
    rules=[
        {
            "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": key.arn},
            "bucket_key_enabled": True,
        }
    ],
)
aws.s3.BucketPolicy(
    "data-policy",
    bucket=b.id,
    policy=key.arn.apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": "*",
                        "Action": "s3:GetObject",
                        "Resource": "arn:aws:s3:::corpus-data/*",
                        "Condition": {"StringEquals": {"aws:ResourceTag/key": arn}},
                    }
                ],
            }
        )
    ),
)
