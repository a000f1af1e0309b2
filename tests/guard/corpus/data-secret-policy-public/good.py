"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.secretsmanager.SecretPolicy(
    "hf-token-policy",
    secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:role/trainer"},
                    "Action": "secretsmanager:GetSecretValue",
                    "Resource": "*",
                }
            ],
        }
    ),
)
