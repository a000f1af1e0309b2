"""A Spot Fleet with inline launch specifications: V100s (deprecated, not allowed), public IPs, unencrypted
root volumes, and no way to require IMDSv2."""

import pulumi_aws as aws

aws.ec2.SpotFleetRequest(
    "fleet",
    iam_fleet_role="arn:aws:iam::123456789012:role/aws-ec2-spot-fleet-tagging-role",
    target_capacity=2,
    launch_specifications=[
        {
            "ami": "ami-0123456789abcdef0",
            "instance_type": "p3.8xlarge",
            "associate_public_ip_address": True,
            "root_block_devices": [{"encrypted": False, "volume_size": 200}],
        }
    ],
)
