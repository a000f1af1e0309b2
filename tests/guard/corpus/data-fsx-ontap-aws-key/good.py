"""The good twin of data-fsx-ontap-aws-key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.fsx.OntapFileSystem(
    "ontap-home",
    deployment_type="SINGLE_AZ_1",
    storage_capacity=1024,
    throughput_capacity=128,
    subnet_ids=["subnet-0a1b2c3d4e5f60718"],
    preferred_subnet_id="subnet-0a1b2c3d4e5f60718",
    kms_key_id=key.arn,
    tags=TAGS,
)
