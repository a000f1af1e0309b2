"""A managed prefix list holding the internet in halves, used by an all-ports tcp rule (0-65535)."""

import pulumi_aws as aws

pl = aws.ec2.ManagedPrefixList(
    "partners",
    address_family="IPv4",
    max_entries=4,
    entries=[{"cidr": "0.0.0.0/1", "description": "partners a-m"}, {"cidr": "128.0.0.0/1", "description": "n-z"}],
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
