"""The good twin: hop limit 1."""

import pulumi_aws as aws

key = aws.kms.Key("key", enable_key_rotation=True)
aws.ec2.SpotInstanceRequest(
    "box",
    ami="ami-0123456789abcdef0",
    instance_type="g6e.xlarge",
    associate_public_ip_address=False,
    subnet_id="subnet-0a1b2c3d4e5f60789",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    root_block_device={"encrypted": True, "kms_key_id": key.arn},
    tags={"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"},
)
