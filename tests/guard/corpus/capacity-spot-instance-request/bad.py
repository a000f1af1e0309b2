"""A one-off spot request for a T4 box: public IP, IMDSv1, unencrypted root volume."""

import pulumi_aws as aws

aws.ec2.SpotInstanceRequest(
    "box",
    ami="ami-0123456789abcdef0",
    instance_type="g4dn.xlarge",
    associate_public_ip_address=True,
    root_block_device={"encrypted": False},
    tags={"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"},
)
