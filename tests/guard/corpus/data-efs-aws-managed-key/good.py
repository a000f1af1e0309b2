"""The good twin of data-efs-aws-managed-key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.efs.FileSystem("datasets-efs", encrypted=True, kms_key_id=key.arn, throughput_mode="elastic", tags=TAGS, opts=KEEP)
