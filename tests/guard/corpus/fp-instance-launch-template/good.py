"""A GPU instance launched from a compliant launch template: IMDSv2, encryption and no public IP come from it."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
lt = aws.ec2.LaunchTemplate(
    "gpu-lt",
    image_id="ami-0123456789abcdef0",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": "alias/corpus"}}],
    network_interfaces=[{"device_index": 0, "associate_public_ip_address": "false"}],
    tags=TAGS,
    tag_specifications=[{"resource_type": k, "tags": TAGS} for k in ("instance", "volume")],
)
aws.ec2.Instance(
    "trainer",
    instance_type="g6e.xlarge",
    launch_template={"id": lt.id, "version": "$Latest"},
    tags=TAGS,
)
