"""The automation role reads the roles it reports on and nothing else."""

import json

import pulumi_aws as aws

aws.iam.Role(
    "automation",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
    inline_policies=[
        {
            "name": "manage",
            "policy": json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": ["iam:GetRole", "iam:ListRoles"],
                            "Resource": "arn:aws:iam::123456789012:role/*",
                        }
                    ],
                }
            ),
        }
    ],
)
