"""An all-protocol ingress rule (ip_protocol -1, no ports) from ::0/0, next to a load balancer's 443."""

import pulumi_aws as aws

sg = aws.ec2.SecurityGroup("web", vpc_id="vpc-0a1b2c3d4e5f60789", tags={"gpucloud.io/load-balancer": "true"})
aws.vpc.SecurityGroupIngressRule(
    "https", security_group_id=sg.id, ip_protocol="tcp", from_port=443, to_port=443, cidr_ipv4="0.0.0.0/0"
)
aws.vpc.SecurityGroupIngressRule("anything", security_group_id=sg.id, ip_protocol="-1", cidr_ipv6="::0/0")
