"""A bucket whose name is computed sits next to an insecure bucket: the insecure one must still be flagged."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
# Retained with the data it encrypts (GC-REL-102).
key = aws.kms.Key("data-key", enable_key_rotation=True, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
# The name is only known once the key exists.
computed = aws.s3.Bucket(
    "computed-name",
    bucket=key.key_id.apply(lambda k: f"data-{k[:8]}"),
    tags=TAGS,
    opts=pulumi.ResourceOptions(retain_on_delete=True),
)
aws.s3.BucketPublicAccessBlock(
    "computed-name-pab",
    bucket=computed.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
aws.s3.BucketServerSideEncryptionConfiguration(
    "computed-name-sse",
    bucket=computed.id,
    rules=[
        {
            "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": key.arn},
            "bucket_key_enabled": True,
        }
    ],
)
aws.s3.BucketPolicy(
    "computed-name-tls",
    bucket=computed.id,
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyPlaintext",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": "*",
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    ),
)
aws.s3.BucketVersioning("computed-name-ver", bucket=computed.id, versioning_configuration={"status": "Enabled"})

# Careless: no public access block, default encryption only, no TLS policy.
aws.s3.Bucket("insecure", bucket="corpus-insecure-data", tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
