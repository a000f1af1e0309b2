"""kms_key_id names the AWS-managed FSx key alias."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"

aws.fsx.LustreFileSystem(
    "train-lustre",
    deployment_type="PERSISTENT_2",
    per_unit_storage_throughput=250,
    storage_capacity=2400,
    subnet_ids="subnet-0a1b2c3d4e5f60718",
    kms_key_id="alias/aws/fsx",
    tags=TAGS,
    opts=KEEP,
)
