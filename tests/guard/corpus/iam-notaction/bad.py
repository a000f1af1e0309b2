""" "Everything except IAM" written with NotAction on Resource "*": still every other action of every service."""

import json

import pulumi_aws as aws

aws.iam.Policy(
    "ops",
    policy=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]}
    ),
)
