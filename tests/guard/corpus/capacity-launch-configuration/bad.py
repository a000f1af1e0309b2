"""An autoscaling group on a launch configuration: T4 GPUs (not allowed in prod), IMDSv1, an unencrypted root
volume and a public IP, none of which a launch-template-only pack sees."""

import pulumi_aws as aws

lc = aws.ec2.LaunchConfiguration(
    "lc",
    image_id="ami-0123456789abcdef0",
    instance_type="g4dn.12xlarge",
    associate_public_ip_address=True,
    metadata_options={"http_tokens": "optional"},
    root_block_device={"encrypted": False, "volume_size": 200},
)
aws.autoscaling.Group(
    "asg",
    launch_configuration=lc.name,
    min_size=0,
    max_size=2,
    vpc_zone_identifiers=["subnet-0a1b2c3d4e5f60789"],
    tags=[
        {"key": k, "value": v, "propagate_at_launch": True}
        for k, v in {"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"}.items()
    ],
)
