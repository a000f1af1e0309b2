"""The same group on a launch template: L40S GPUs, IMDSv2, a KMS-encrypted root volume, no public IP."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"}
key = aws.kms.Key("key", enable_key_rotation=True)
lt = aws.ec2.LaunchTemplate(
    "lt",
    image_id="ami-0123456789abcdef0",
    instance_type="g6e.12xlarge",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": key.arn}}],
    tag_specifications=[{"resource_type": "instance", "tags": TAGS}, {"resource_type": "volume", "tags": TAGS}],
    tags=TAGS,
)
aws.autoscaling.Group(
    "asg",
    launch_template={"id": lt.id, "version": "$Latest"},
    min_size=0,
    max_size=2,
    vpc_zone_identifiers=["subnet-0a1b2c3d4e5f60789"],
    tags=[{"key": k, "value": v, "propagate_at_launch": True} for k, v in TAGS.items()],
)
