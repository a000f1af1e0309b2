"""Backup vault policy letting Principal * copy recovery points out."""

import json

import pulumi_aws as aws

aws.backup.VaultPolicy(
    "checkpoints-policy",
    backup_vault_name="checkpoints",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": "*", "Action": "backup:CopyIntoBackupVault", "Resource": "*"}
            ],
        }
    ),
)
