"""Read-only and SSM policies instead."""

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
    managed_policy_arns=["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"],
)
aws.iam.UserPolicyAttachment("alice-iam", user="alice", policy_arn="arn:aws:iam::aws:policy/IAMReadOnlyAccess")
