"""The key is read from Secrets Manager at boot."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
aws.ec2.Instance(
    "billing-worker",
    ami="ami-0a1b2c3d4e5f60789",
    instance_type="m7i.large",
    subnet_id="subnet-0a1b2c3d4e5f60718",
    metadata_options={"http_tokens": "required"},
    root_block_device={
        "encrypted": True,
        "kms_key_id": "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789",
    },
    user_data="#!/bin/bash\nexport STRIPE_KEY=$(aws secretsmanager get-secret-value --secret-id billing/stripe --query SecretString --output text)\n",  # noqa: E501
    tags=TAGS,
)
