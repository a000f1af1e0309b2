"""A flow log on one subnet of the VPC (depends on the VPC through the subnet) passed off as VPC coverage."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

vpc = aws.ec2.Vpc("gpu-vpc", cidr_block="10.60.0.0/16", enable_dns_hostnames=True, tags=TAGS)
subnet = aws.ec2.Subnet("gpu-a", vpc_id=vpc.id, cidr_block="10.60.0.0/20", availability_zone="us-east-1a", tags=TAGS)
aws.ec2.FlowLog(
    "gpu-a-flow",
    subnet_id=subnet.id,
    traffic_type="ALL",
    log_destination_type="s3",
    log_destination="arn:aws:s3:::corpus-flow-logs",
    tags=TAGS,
)
