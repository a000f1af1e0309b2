"""The good twin of data-fsx-windows-aws-key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.fsx.WindowsFileSystem(
    "win-share",
    active_directory_id="d-1234567890",
    storage_capacity=32,
    throughput_capacity=32,
    subnet_ids=["subnet-0a1b2c3d4e5f60718"],
    kms_key_id=key.arn,
    tags=TAGS,
)
