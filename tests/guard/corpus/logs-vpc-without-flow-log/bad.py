"""A GPU VPC with no VPC flow log."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

vpc = aws.ec2.Vpc("gpu-vpc", cidr_block="10.60.0.0/16", enable_dns_hostnames=True, tags=TAGS)
