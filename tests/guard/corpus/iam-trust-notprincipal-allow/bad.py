"""Role trust Allow with NotPrincipal: everyone but the principal it names."""

import json

import pulumi_aws as aws

aws.iam.Role(
    "partner-access",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "NotPrincipal": {"AWS": "arn:aws:iam::123456789012:root"},
                    "Action": "sts:AssumeRole",
                }
            ],
        }
    ),
)
