"""An EC2 Fleet that names no instance type at all: attribute-based selection of "any NVIDIA GPU", 20 units,
so EC2 may pick V100 and T4 machines and up to 160 GPUs."""

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
    "anygpu",
    type="maintain",
    launch_template_configs=[
        {
            "launch_template_specification": {"launch_template_id": lt.id, "version": "$Latest"},
            "overrides": [
                {
                    "instance_requirements": {
                        "accelerator_manufacturers": ["nvidia"],
                        "vcpu_count": {"min": 4},
                        "memory_mib": {"min": 16384},
                    }
                }
            ],
        }
    ],
    target_capacity_specification={"default_target_capacity_type": "on-demand", "total_target_capacity": 20},
)
