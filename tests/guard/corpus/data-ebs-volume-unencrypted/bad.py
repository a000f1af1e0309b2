"""A standalone EBS scratch volume created unencrypted."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.ebs.Volume(
    "scratch-vol", availability_zone="us-east-1a", size=500, type="gp3", encrypted=False, tags=TAGS, opts=KEEP
)
