"""RDP from the whole internet as a separate rule resource."""

import pulumi_aws as aws

acl = aws.ec2.NetworkAcl("nodes-acl", vpc_id="vpc-0a1b2c3d4e5f60789")
aws.ec2.NetworkAclRule(
    "rdp-0",
    network_acl_id=acl.id,
    rule_number=100,
    egress=False,
    protocol="tcp",
    rule_action="allow",
    cidr_block="0.0.0.0/0",
    from_port=3389,
    to_port=3389,
)
