"""The good twin: only requests through the stack's VPC endpoint may invoke it."""

import json

import pulumi_aws as aws

aws.apigateway.RestApiPolicy(
    "inference-api-policy",
    rest_api_id="a1b2c3d4e5",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "execute-api:Invoke",
                    "Resource": "arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5/*",
                    "Condition": {"StringEquals": {"aws:SourceVpce": "vpce-0a1b2c3d4e5f60789"}},
                }
            ],
        }
    ),
)
