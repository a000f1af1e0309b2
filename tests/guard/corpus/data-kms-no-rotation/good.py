"""The good twin of data-kms-no-rotation."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.kms.Key("checkpoint-key", description="checkpoint encryption", deletion_window_in_days=30, enable_key_rotation=True)
