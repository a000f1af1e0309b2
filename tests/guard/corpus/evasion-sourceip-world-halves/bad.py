"""Bucket policy to Principal * 'restricted' by aws:SourceIp 0.0.0.0/1 + 128.0.0.0/1 (the internet)."""

import json

import pulumi_aws as aws

aws.s3.BucketPolicy(
    "models-policy",
    bucket="corpus-models",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "s3:GetObject",
                    "Resource": "arn:aws:s3:::corpus-models/*",
                    "Condition": {"IpAddress": {"aws:SourceIp": ["0.0.0.0/1", "128.0.0.0/1"]}},
                }
            ],
        }
    ),
)
