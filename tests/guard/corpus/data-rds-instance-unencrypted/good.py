"""The good twin of data-rds-instance-unencrypted."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.rds.Instance(
    "mlflow-db",
    engine="postgres",
    engine_version="16.4",
    instance_class="db.r6g.large",
    allocated_storage=200,
    username="mlflow",
    manage_master_user_password=True,
    db_subnet_group_name="ml-private",
    tags=TAGS,
    storage_encrypted=True,
    kms_key_id=key.arn,
)
