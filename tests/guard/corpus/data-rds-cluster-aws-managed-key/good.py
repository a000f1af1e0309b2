"""The good twin of data-rds-cluster-aws-managed-key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.rds.Cluster(
    "feature-store",
    engine="aurora-postgresql",
    master_username="features",
    manage_master_user_password=True,
    storage_encrypted=True,
    kms_key_id=key.arn,
    tags=TAGS,
)
