"""The good twin of data-fsx-lustre-persistent-aws-key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.fsx.LustreFileSystem(
    "train-lustre",
    deployment_type="PERSISTENT_2",
    per_unit_storage_throughput=250,
    storage_capacity=2400,
    subnet_ids="subnet-0a1b2c3d4e5f60718",
    kms_key_id=key.arn,
    tags=TAGS,
    opts=KEEP,
)
