"""The good twin: a customer-managed key."""

import pulumi_aws as aws

aws.secretsmanager.Secret(
    "hf-token",
    kms_key_id="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
)
