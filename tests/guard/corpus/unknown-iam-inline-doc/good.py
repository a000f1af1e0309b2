"""An inline role policy built from bucket.arn (as the shipped stacks do) grants object access to that bucket only."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}],
    }
)
# Retained with the data it encrypts (GC-REL-102).
key = aws.kms.Key("key", enable_key_rotation=True, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
data = aws.s3.Bucket("data", bucket="corpus-data", tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
aws.s3.BucketPublicAccessBlock(
    "data-pab",
    bucket=data.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
aws.s3.BucketServerSideEncryptionConfiguration(
    "data-sse",
    bucket=data.id,
    rules=[
        {
            "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": key.arn},
            "bucket_key_enabled": True,
        }
    ],
)
aws.s3.BucketPolicy(
    "data-tls",
    bucket=data.id,
    policy=data.arn.apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Deny",
                        "Principal": "*",
                        "Action": "s3:*",
                        "Resource": [arn, f"{arn}/*"],
                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                    }
                ],
            }
        )
    ),
)
role = aws.iam.Role("trainer", assume_role_policy=TRUST, tags=TAGS)
aws.iam.RolePolicy(
    "trainer-data",
    role=role.id,
    policy=data.arn.apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": f"{arn}/*"},
                ],
            }
        )
    ),
)
