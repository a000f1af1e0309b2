"""The good twin: SSE-SQS off in favour of a customer-managed KMS key (SSE-KMS)."""

import pulumi_aws as aws

aws.sqs.Queue(
    "jobs",
    sqs_managed_sse_enabled=False,
    kms_master_key_id="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
)
