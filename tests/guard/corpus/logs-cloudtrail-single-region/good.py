"""The good twin of logs-cloudtrail-single-region."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

# The platform data key, created and rotated by the platform stack.
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
aws.cloudtrail.Trail(
    "org-audit",
    s3_bucket_name="corpus-audit-logs",
    include_global_service_events=True,
    is_multi_region_trail=True,
    enable_log_file_validation=True,
    kms_key_id=KEY_ARN,
    tags=TAGS,
)
