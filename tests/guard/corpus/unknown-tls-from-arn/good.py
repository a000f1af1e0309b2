"""The TLS-deny policy is built from bucket.arn (the common idiom); both buckets use it."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
# Retained with the data it encrypts (GC-REL-102).
key = aws.kms.Key("key", enable_key_rotation=True, tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))


def bucket(name: str, tls: bool) -> None:
    b = aws.s3.Bucket(name, bucket=f"corpus-{name}", tags=TAGS, opts=pulumi.ResourceOptions(retain_on_delete=True))
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
    if tls:
        aws.s3.BucketPolicy(
            f"{name}-tls",
            bucket=b.id,
            policy=aws.iam.get_policy_document_output(
                statements=[
                    {
                        "sid": "DenyPlaintext",
                        "effect": "Deny",
                        "actions": ["s3:*"],
                        "principals": [{"type": "*", "identifiers": ["*"]}],
                        "resources": [b.arn, b.arn.apply(lambda a: f"{a}/*")],
                        "conditions": [{"test": "Bool", "variable": "aws:SecureTransport", "values": ["false"]}],
                    }
                ]
            ).json,
        )


bucket("a-first", tls=True)
bucket("z-after", tls=True)
