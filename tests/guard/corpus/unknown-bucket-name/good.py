"""Both buckets carry every S3 control; one name is computed, the other literal."""

import json

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
# Retained with the data it encrypts (GC-REL-102).
key = aws.kms.Key("data-key", enable_key_rotation=True, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))


def secure(name: str, bucket_name: pulumi.Input[str]) -> None:
    b = aws.s3.Bucket(name, bucket=bucket_name, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
    aws.s3.BucketPublicAccessBlock(
        f"{name}-pab",
        bucket=b.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        f"{name}-sse",
        bucket=b.id,
        rules=[
            {
                "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": key.arn},
                "bucket_key_enabled": True,
            }
        ],
    )
    aws.s3.BucketPolicy(
        f"{name}-tls",
        bucket=b.id,
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
    aws.s3.BucketVersioning(f"{name}-ver", bucket=b.id, versioning_configuration={"status": "Enabled"})


secure("computed-name", key.key_id.apply(lambda k: f"data-{k[:8]}"))
secure("insecure", "corpus-insecure-data")
