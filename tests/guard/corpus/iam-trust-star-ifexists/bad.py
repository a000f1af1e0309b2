"""Role trust to {AWS: *} with aws:PrincipalOrgID under StringEqualsIfExists (holds when the key is absent)."""

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
                    "Condition": {"StringEqualsIfExists": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}},
                }
            ],
        }
    ),
)
