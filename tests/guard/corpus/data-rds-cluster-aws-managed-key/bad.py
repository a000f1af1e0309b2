"""An Aurora cluster encrypted only with the AWS-managed aws/rds key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.rds.Cluster(
    "feature-store",
    engine="aurora-postgresql",
    master_username="features",
    manage_master_user_password=True,
    storage_encrypted=True,
    tags=TAGS,
)
