"""SSH from the VPC only."""

import pulumi_aws as aws

aws.ec2.DefaultSecurityGroup(
    "default-sg",
    vpc_id="vpc-0a1b2c3d4e5f60789",
    ingress=[{"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_blocks": ["10.0.0.0/16"]}],
)
