"""SSH open to the whole IPv4 internet written as two halves, 0.0.0.0/1 and 128.0.0.0/1."""

import pulumi_aws as aws

aws.ec2.SecurityGroup(
    "bastion",
    vpc_id="vpc-0a1b2c3d4e5f60789",
    ingress=[{"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_blocks": ["0.0.0.0/1", "128.0.0.0/1"]}],
)
