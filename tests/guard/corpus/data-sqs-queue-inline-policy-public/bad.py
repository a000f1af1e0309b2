"""SQS queue with an inline policy to {AWS: *} under aws:SecureTransport only."""

import json

import pulumi_aws as aws

aws.sqs.Queue(
    "jobs",
    sqs_managed_sse_enabled=True,
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "*"},
                    "Action": "sqs:ReceiveMessage",
                    "Resource": "arn:aws:sqs:us-east-1:123456789012:jobs",
                    "Condition": {"Bool": {"aws:SecureTransport": "true"}},
                }
            ],
        }
    ),
)
