"""An FSx for NetApp ONTAP file system on the AWS-managed key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.fsx.OntapFileSystem(
    "ontap-home",
    deployment_type="SINGLE_AZ_1",
    storage_capacity=1024,
    throughput_capacity=128,
    subnet_ids=["subnet-0a1b2c3d4e5f60718"],
    preferred_subnet_id="subnet-0a1b2c3d4e5f60718",
    tags=TAGS,
)
