"""The account's EBS encryption-by-default switched off."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.ebs.EncryptionByDefault("ebs-default", enabled=False)
