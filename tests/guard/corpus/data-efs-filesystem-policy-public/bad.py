"""EFS file system policy allowing client mounts and writes to Principal *."""

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
                    "Principal": "*",
                    "Action": ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"],
                    "Resource": "*",
                }
            ],
        }
    ),
)
