"""User data posting boot status with a Slack bot token."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
aws.ec2.LaunchTemplate(
    "gpu-nodes",
    image_id="ami-0a1b2c3d4e5f60789",
    instance_type="m7i.large",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[
        {
            "device_name": "/dev/xvda",
            "ebs": {
                "encrypted": "true",
                "kms_key_id": "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789",
                "volume_size": 100,
            },
        }
    ],
    user_data="IyEvYmluL2Jhc2gKY3VybCAtSCAnQXV0aG9yaXphdGlvbjogQmVhcmVyIHhveGItMjA0ODExMDI0NzMxLTEwMjQ1NTA5MzgxMjcteDdLcTJObVA5clQ0dlcxeVozYkM1ZEY2JyBodHRwczovL3NsYWNrLmNvbS9hcGkvY2hhdC5wb3N0TWVzc2FnZSAtZCBjaGFubmVsPW9wcwo=",
    tag_specifications=[{"resource_type": "instance", "tags": TAGS}, {"resource_type": "volume", "tags": TAGS}],
    tags=TAGS,
)
