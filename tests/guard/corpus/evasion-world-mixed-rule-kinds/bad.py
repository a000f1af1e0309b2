"""World SSH assembled from two rule resources of different kinds on one group: a SecurityGroupRule for
0.0.0.0/1 on port 22 and an all-protocol SecurityGroupIngressRule for 128.0.0.0/1."""

import pulumi_aws as aws

sg = aws.ec2.SecurityGroup("jump", vpc_id="vpc-0a1b2c3d4e5f60789")
aws.ec2.SecurityGroupRule(
    "ssh-a",
    type="ingress",
    security_group_id=sg.id,
    protocol="tcp",
    from_port=22,
    to_port=22,
    cidr_blocks=["0.0.0.0/2", "64.0.0.0/2"],
)
aws.vpc.SecurityGroupIngressRule("rest", security_group_id=sg.id, ip_protocol="-1", cidr_ipv4="128.0.0.0/1")
