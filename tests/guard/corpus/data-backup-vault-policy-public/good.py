"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.backup.VaultPolicy(
    "checkpoints-policy",
    backup_vault_name="checkpoints",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
                    "Action": "backup:CopyIntoBackupVault",
                    "Resource": "*",
                }
            ],
        }
    ),
)
