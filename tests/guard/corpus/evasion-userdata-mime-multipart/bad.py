"""MIME multi-part user data whose base64 shell-script part clones with a GitHub token."""

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
    user_data="Q29udGVudC1UeXBlOiBtdWx0aXBhcnQvbWl4ZWQ7IGJvdW5kYXJ5PSI9PUJPVU5EQVJZPT0iCk1JTUUtVmVyc2lvbjogMS4wCgotLT09Qk9VTkRBUlk9PQpDb250ZW50LVR5cGU6IHRleHQveC1zaGVsbHNjcmlwdDsgY2hhcnNldD0idXMtYXNjaWkiCkNvbnRlbnQtVHJhbnNmZXItRW5jb2Rpbmc6IGJhc2U2NAoKSXlFdlltbHVMMkpoYzJnS1oybDBJR05zYjI1bElHaDBkSEJ6T2k4dmVDMWhZMk5sYzNNdGRHOXJaVzQ2WjJod1gxcHhPSGhMTW0xT05IQlNOM05VTVhaWE0zbENOV1JHTm1oS09XdE1NR05CTW1WSE5FQm5hWFJvZFdJdVkyOXRMMlY0WVcxd2JHVXRiM0puTDIxc0xXbHVabkpoTG1kcGRDQXZiM0IwTDIxc0NnPT0KLS09PUJPVU5EQVJZPT0tLQo=",
    tag_specifications=[{"resource_type": "instance", "tags": TAGS}, {"resource_type": "volume", "tags": TAGS}],
    tags=TAGS,
)
