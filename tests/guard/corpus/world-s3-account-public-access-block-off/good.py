"""The good twin: every account-level block on."""

import pulumi_aws as aws

aws.s3.AccountPublicAccessBlock(
    "account-pab",
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
