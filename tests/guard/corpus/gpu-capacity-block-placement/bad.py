"""A Capacity Block pool launched into a cluster placement group: the block was not created in that group, so
every launch fails with InsufficientInstanceCapacity."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"}
key = aws.kms.Key("key", enable_key_rotation=True)
pg = aws.ec2.PlacementGroup("pg", strategy="cluster")
lt = aws.ec2.LaunchTemplate(
    "block-lt",
    image_id="ami-0123456789abcdef0",
    instance_type="p5.48xlarge",
    instance_market_options={"market_type": "capacity-block"},
    capacity_reservation_specification={
        "capacity_reservation_target": {"capacity_reservation_id": "cr-0a1b2c3d4e5f60789"}
    },
    placement={"group_name": pg.name},
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": key.arn}}],
    tag_specifications=[{"resource_type": "instance", "tags": TAGS}, {"resource_type": "volume", "tags": TAGS}],
    tags=TAGS,
)
aws.autoscaling.Group(
    "block",
    launch_template={"id": lt.id, "version": "$Latest"},
    min_size=0,
    max_size=2,
    vpc_zone_identifiers=["subnet-0a1b2c3d4e5f60789"],
    tags=[{"key": k, "value": v, "propagate_at_launch": True} for k, v in TAGS.items()],
)
