"""kms_key_id set, to the AWS-managed key's alias."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"

aws.efs.FileSystem(
    "datasets-efs",
    encrypted=True,
    kms_key_id="arn:aws:kms:us-east-1:123456789012:alias/aws/elasticfilesystem",
    throughput_mode="elastic",
    tags=TAGS,
    opts=KEEP,
)
