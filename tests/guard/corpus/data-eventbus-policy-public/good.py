"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.cloudwatch.EventBusPolicy(
    "ml-events-policy",
    event_bus_name="ml-events",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "events:PutEvents",
                    "Resource": "arn:aws:events:us-east-1:123456789012:event-bus/ml-events",
                    "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}},
                }
            ],
        }
    ),
)
