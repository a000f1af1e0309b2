"""The good twin of data-ebs-volume-unencrypted."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

# The platform data key, created and rotated by the platform stack.
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
aws.ebs.Volume(
    "scratch-vol",
    availability_zone="us-east-1a",
    size=500,
    type="gp3",
    encrypted=True,
    kms_key_id=KEY_ARN,
    tags=TAGS,
    opts=KEEP,
)
