"""The good twin of data-fsx-ontap-aws-key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

# The platform data key, created and rotated by the platform stack.
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
aws.fsx.OntapFileSystem(
    "ontap-home",
    deployment_type="SINGLE_AZ_1",
    storage_capacity=1024,
    throughput_capacity=128,
    subnet_ids=["subnet-0a1b2c3d4e5f60718"],
    preferred_subnet_id="subnet-0a1b2c3d4e5f60718",
    kms_key_id=KEY_ARN,
    tags=TAGS,
)
