"""The good twin of data-efs-unencrypted."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.efs.FileSystem(
    "shared-home", performance_mode="generalPurpose", encrypted=True, kms_key_id=key.arn, tags=TAGS, opts=KEEP
)
