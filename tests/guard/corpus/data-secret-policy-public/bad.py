"""Secrets Manager resource policy letting Principal * read the secret."""

import json

import pulumi_aws as aws

aws.secretsmanager.SecretPolicy(
    "hf-token-policy",
    secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": "*", "Action": "secretsmanager:GetSecretValue", "Resource": "*"}
            ],
        }
    ),
)
