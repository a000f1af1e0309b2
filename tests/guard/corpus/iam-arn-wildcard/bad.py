"""Action "*" on "arn:aws:*:*:*:*" instead of "*": the same full admin in a pattern that looks scoped."""

import json

import pulumi_aws as aws

role = aws.iam.Role(
    "ci",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "codebuild.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
)
aws.iam.RolePolicy(
    "ci-deploy",
    role=role.id,
    policy=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "arn:aws:*:*:*:*"}]}
    ),
)
