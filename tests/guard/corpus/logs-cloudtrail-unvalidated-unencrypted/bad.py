"""A CloudTrail trail without log file validation or a KMS key."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.cloudtrail.Trail("org-audit", s3_bucket_name="corpus-audit-logs", is_multi_region_trail=True, tags=TAGS)
