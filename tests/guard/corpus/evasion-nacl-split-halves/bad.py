"""RDP from 0.0.0.0/1 and 128.0.0.0/1: the IPv4 internet in two rules."""

import pulumi_aws as aws

acl = aws.ec2.NetworkAcl("nodes-acl", vpc_id="vpc-0a1b2c3d4e5f60789")
aws.ec2.NetworkAclRule(
    "rdp-0",
    network_acl_id=acl.id,
    rule_number=100,
    egress=False,
    protocol="tcp",
    rule_action="allow",
    cidr_block="0.0.0.0/1",
    from_port=3389,
    to_port=3389,
)
aws.ec2.NetworkAclRule(
    "rdp-1",
    network_acl_id=acl.id,
    rule_number=101,
    egress=False,
    protocol="tcp",
    rule_action="allow",
    cidr_block="128.0.0.0/1",
    from_port=3389,
    to_port=3389,
)
