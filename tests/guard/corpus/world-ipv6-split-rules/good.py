"""The rules admit the VPC's IPv6 block and a unique-local range only."""

import pulumi_aws as aws

sg = aws.ec2.SecurityGroup("api", vpc_id="vpc-0a1b2c3d4e5f60789")
aws.vpc.SecurityGroupIngressRule(
    "low-half",
    security_group_id=sg.id,
    ip_protocol="tcp",
    from_port=8080,
    to_port=8080,
    cidr_ipv6="2600:1f18:abcd::/56",
)
aws.vpc.SecurityGroupIngressRule(
    "high-half", security_group_id=sg.id, ip_protocol="tcp", from_port=8080, to_port=8080, cidr_ipv6="fd00::/8"
)
