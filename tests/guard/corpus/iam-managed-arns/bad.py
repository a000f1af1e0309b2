"""AdministratorAccess through Role.managedPolicyArns and IAMFullAccess through a user attachment."""

import json

import pulumi_aws as aws

aws.iam.Role(
    "ops",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
    managed_policy_arns=["arn:aws:iam::aws:policy/AdministratorAccess"],
)
aws.iam.UserPolicyAttachment("alice-iam", user="alice", policy_arn="arn:aws:iam::aws:policy/IAMFullAccess")
