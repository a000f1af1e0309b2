"""The same instance from a careless template: IMDSv1, unencrypted root volume, public IP."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
lt = aws.ec2.LaunchTemplate(
    "gpu-lt",
    image_id="ami-0123456789abcdef0",
    metadata_options={"http_tokens": "optional", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "false"}}],
    network_interfaces=[{"device_index": 0, "associate_public_ip_address": "true"}],
    tags=TAGS,
    tag_specifications=[{"resource_type": k, "tags": TAGS} for k in ("instance", "volume")],
)
aws.ec2.Instance(
    "trainer",
    instance_type="g6e.xlarge",
    launch_template={"id": lt.id, "version": "$Latest"},
    tags=TAGS,
)
