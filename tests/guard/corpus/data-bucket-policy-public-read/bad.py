"""A bucket policy granting s3:GetObject to Principal * (a public bucket)."""

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
                }
            ],
        }
    ),
)
