"""An EFS file system created without encryption at rest."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
KEEP = pulumi.ResourceOptions(retain_on_delete=True)

aws.efs.FileSystem("shared-home", performance_mode="generalPurpose", tags=TAGS, opts=KEEP)
