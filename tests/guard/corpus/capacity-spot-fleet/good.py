"""The fleet launches from an IMDSv2, KMS-encrypted template with an allowed GPU type."""

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
aws.ec2.SpotFleetRequest(
    "fleet",
    iam_fleet_role="arn:aws:iam::123456789012:role/aws-ec2-spot-fleet-tagging-role",
    target_capacity=2,
    launch_template_configs=[
        {
            "launch_template_specification": {"id": lt.id, "version": "$Latest"},
            "overrides": [{"instance_type": "g6e.12xlarge", "subnet_id": "subnet-0a1b2c3d4e5f60789"}],
        }
    ],
)
