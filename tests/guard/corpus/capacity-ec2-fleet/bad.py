"""An EC2 Fleet overriding a clean template with a deprecated V100 type, 40 instances of it."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"}
key = aws.kms.Key("key", enable_key_rotation=True)
lt = aws.ec2.LaunchTemplate(
    "lt",
    image_id="ami-0123456789abcdef0",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": key.arn}}],
    tag_specifications=[{"resource_type": "instance", "tags": TAGS}, {"resource_type": "volume", "tags": TAGS}],
    tags=TAGS,
)
aws.ec2.Fleet(
    "fleet",
    type="maintain",
    launch_template_configs=[
        {
            "launch_template_specification": {"launch_template_id": lt.id, "version": "$Latest"},
            "overrides": [{"instance_type": "p3.16xlarge"}],
        }
    ],
    target_capacity_specification={"default_target_capacity_type": "on-demand", "total_target_capacity": 40},
)
