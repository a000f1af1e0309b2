"""SQS encrypts new queues with SSE-SQS by default; this queue turns it off and names no KMS key."""

import pulumi_aws as aws

aws.sqs.Queue("jobs", sqs_managed_sse_enabled=False)
