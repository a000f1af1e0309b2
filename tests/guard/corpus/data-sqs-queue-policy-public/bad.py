"""SQS queue policy allowing sqs:SendMessage to Principal * with no condition."""

import json

import pulumi_aws as aws

aws.sqs.QueuePolicy(
    "jobs-policy",
    queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/jobs",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "sqs:SendMessage",
                    "Resource": "arn:aws:sqs:us-east-1:123456789012:jobs",
                }
            ],
        }
    ),
)
