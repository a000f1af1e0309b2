"""The account-level block turns off the block on public bucket policies (every bucket's own block still counts,
but the account no longer backs it up)."""

import pulumi_aws as aws

aws.s3.AccountPublicAccessBlock(
    "account-pab",
    block_public_acls=True,
    block_public_policy=False,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)
