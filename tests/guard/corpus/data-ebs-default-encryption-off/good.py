"""The good twin of data-ebs-default-encryption-off."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

# The platform data key, created and rotated by the platform stack.
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
aws.ebs.EncryptionByDefault("ebs-default", enabled=True)
aws.ebs.DefaultKmsKey("ebs-default-key", key_arn=KEY_ARN)
