"""The good twin of data-ebs-default-encryption-off."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.ebs.EncryptionByDefault("ebs-default", enabled=True)
aws.ebs.DefaultKmsKey("ebs-default-key", key_arn=key.arn)
