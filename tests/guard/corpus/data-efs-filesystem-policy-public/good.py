"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.efs.FileSystemPolicy(
    "datasets-efs-policy",
    file_system_id="fs-0a1b2c3d4e5f60789",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:role/trainer"},
                    "Action": ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"],
                    "Resource": "*",
                }
            ],
        }
    ),
)
