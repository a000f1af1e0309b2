"""The IPv6 internet as ::/1 and 8000::/1, each half in its own ingress rule resource on the same group."""

import pulumi_aws as aws

sg = aws.ec2.SecurityGroup("api", vpc_id="vpc-0a1b2c3d4e5f60789")
aws.vpc.SecurityGroupIngressRule(
    "low-half", security_group_id=sg.id, ip_protocol="tcp", from_port=8080, to_port=8080, cidr_ipv6="::/1"
)
aws.vpc.SecurityGroupIngressRule(
    "high-half", security_group_id=sg.id, ip_protocol="tcp", from_port=8080, to_port=8080, cidr_ipv6="8000::/1"
)
