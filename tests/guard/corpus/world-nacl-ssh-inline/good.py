"""SSH only from the VPC."""

import pulumi_aws as aws

aws.ec2.NetworkAcl(
    "nodes-acl",
    vpc_id="vpc-0a1b2c3d4e5f60789",
    ingress=[
        {
            "protocol": "tcp",
            "rule_no": 100,
            "action": "allow",
            "cidr_block": "10.0.0.0/16",
            "from_port": 22,
            "to_port": 22,
        },
        {
            "protocol": "tcp",
            "rule_no": 200,
            "action": "allow",
            "cidr_block": "10.0.0.0/8",
            "from_port": 443,
            "to_port": 443,
        },
    ],
    egress=[
        {"protocol": "-1", "rule_no": 100, "action": "allow", "cidr_block": "0.0.0.0/0", "from_port": 0, "to_port": 0}
    ],
)
