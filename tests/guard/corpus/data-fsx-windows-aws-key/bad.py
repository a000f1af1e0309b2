"""An FSx for Windows File Server file system on the AWS-managed key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.fsx.WindowsFileSystem(
    "win-share",
    active_directory_id="d-1234567890",
    storage_capacity=32,
    throughput_capacity=32,
    subnet_ids=["subnet-0a1b2c3d4e5f60718"],
    tags=TAGS,
)
