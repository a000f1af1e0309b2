"""An RDS instance (experiment tracking DB) with unencrypted storage."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

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
)
