"""The same CPU pool says so: acceleratorCount max 0 excludes every accelerated type."""

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
aws.autoscaling.Group(
    "workers",
    min_size=0,
    max_size=4,
    vpc_zone_identifiers=["subnet-0a1b2c3d4e5f60789"],
    mixed_instances_policy={
        "launch_template": {
            "launch_template_specification": {"launch_template_id": lt.id, "version": "$Latest"},
            "overrides": [
                {
                    "instance_requirements": {
                        "vcpu_count": {"min": 4, "max": 8},
                        "memory_mib": {"min": 16384},
                        "accelerator_count": {"max": 0},
                    }
                }
            ],
        },
    },
    tags=[{"key": k, "value": v, "propagate_at_launch": True} for k, v in TAGS.items()],
)
