"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.s3.BucketPolicy(
    "datasets-policy",
    bucket="corpus-datasets",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "s3:GetObject",
                    "Resource": "arn:aws:s3:::corpus-datasets/*",
                    "Condition": {"StringEquals": {"aws:SourceVpce": "vpce-0a1b2c3d4e5f60789"}},
                }
            ],
        }
    ),
)
