"""The non-interruptible mark sits on the launch template's tags while the ASG buys 100 % spot above base."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"}
key = aws.kms.Key("key", enable_key_rotation=True)
lt = aws.ec2.LaunchTemplate(
    "gang-lt",
    image_id="ami-0123456789abcdef0",
    instance_type="p5.48xlarge",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": key.arn}}],
    tag_specifications=[{"resource_type": "instance", "tags": TAGS}, {"resource_type": "volume", "tags": TAGS}],
    tags={**TAGS, "gpucloud.io/interruptible": "false"},
)
aws.autoscaling.Group(
    "gang",
    min_size=0,
    max_size=2,
    vpc_zone_identifiers=["subnet-0a1b2c3d4e5f60789"],
    mixed_instances_policy={
        "launch_template": {"launch_template_specification": {"launch_template_id": lt.id, "version": "$Latest"}},
        "instances_distribution": {"on_demand_base_capacity": 0, "on_demand_percentage_above_base_capacity": 0},
    },
    tags=[{"key": k, "value": v, "propagate_at_launch": True} for k, v in TAGS.items()],
)
