"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.sns.TopicPolicy(
    "alerts-policy",
    arn="arn:aws:sns:us-east-1:123456789012:alerts",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "sns:Publish",
                    "Resource": "arn:aws:sns:us-east-1:123456789012:alerts",
                    "Condition": {"StringEquals": {"AWS:SourceOwner": "123456789012"}},
                }
            ],
        }
    ),
)
