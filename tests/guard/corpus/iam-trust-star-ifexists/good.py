"""The good twin: Role restricted to who it is for."""

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
                    "Principal": {"AWS": "*"},
                    "Action": "sts:AssumeRole",
                    "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}},
                }
            ],
        }
    ),
)
