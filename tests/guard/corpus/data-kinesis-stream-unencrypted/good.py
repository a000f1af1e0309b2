"""The good twin: server-side encryption with a customer-managed key."""

import pulumi_aws as aws

aws.kinesis.Stream(
    "telemetry",
    shard_count=1,
    encryption_type="KMS",
    kms_key_id="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
)
