"""The good twin of logs-cloudtrail-single-region."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

key = aws.kms.Key("data-key", description="corpus data", enable_key_rotation=True, deletion_window_in_days=30)
aws.cloudtrail.Trail(
    "org-audit",
    s3_bucket_name="corpus-audit-logs",
    include_global_service_events=True,
    is_multi_region_trail=True,
    enable_log_file_validation=True,
    kms_key_id=key.arn,
    tags=TAGS,
)
