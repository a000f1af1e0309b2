"""The ops policy lists what it needs on the bucket it needs."""

import json

import pulumi_aws as aws

aws.iam.Policy(
    "ops",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["s3:GetObject", "s3:PutObject"],
                    "Resource": "arn:aws:s3:::corpus-checkpoints/*",
                }
            ],
        }
    ),
)
