"""An inline role policy granting iam:* and sts:* on everything: admin of IAM is admin of the account."""

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
                    "Statement": [{"Effect": "Allow", "Action": ["iam:*", "sts:*"], "Resource": "*"}],
                }
            ),
        }
    ],
)
