"""The prefix list holds the partners' own /24s."""

import pulumi_aws as aws

pl = aws.ec2.ManagedPrefixList(
    "partners",
    address_family="IPv4",
    max_entries=4,
    entries=[{"cidr": "198.51.100.0/24", "description": "partner a"}, {"cidr": "203.0.113.0/24", "description": "b"}],
)
sg = aws.ec2.SecurityGroup("ingest", vpc_id="vpc-0a1b2c3d4e5f60789")
aws.ec2.SecurityGroupRule(
    "partners-in",
    type="ingress",
    security_group_id=sg.id,
    protocol="tcp",
    from_port=0,
    to_port=65535,
    prefix_list_ids=[pl.id],
)
