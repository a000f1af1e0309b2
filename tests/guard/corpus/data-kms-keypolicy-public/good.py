"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.kms.KeyPolicy(
    "data-key-policy",
    key_id="0a1b2c3d-4e5f-6789-abcd-ef0123456789",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "kms:Decrypt",
                    "Resource": "*",
                    "Condition": {
                        "StringEquals": {
                            "kms:CallerAccount": "123456789012",
                            "kms:ViaService": "s3.us-east-1.amazonaws.com",
                        }
                    },
                }
            ],
        }
    ),
)
