"""A persistent FSx for Lustre file system on the AWS-managed key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.fsx.LustreFileSystem(
    "train-lustre",
    deployment_type="PERSISTENT_2",
    per_unit_storage_throughput=250,
    storage_capacity=2400,
    subnet_ids="subnet-0a1b2c3d4e5f60718",
    tags=TAGS,
    opts=KEEP,
)
