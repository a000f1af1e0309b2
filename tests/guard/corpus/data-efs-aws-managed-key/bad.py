"""An encrypted EFS file system that relies on the AWS-managed key instead of a CMK."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.efs.FileSystem("datasets-efs", encrypted=True, throughput_mode="elastic", tags=TAGS, opts=KEEP)
