"""An open bucket hidden behind a computed name, hoping the S3 checks give up on it."""

import pulumi
import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
seed = aws.ssm.Parameter("seed", type="String", value="x", tags=TAGS)
aws.s3.Bucket(
    "hidden",
    bucket=seed.version.apply(lambda v: f"corpus-hidden-{v}"),
    tags=TAGS,
    opts=pulumi.ResourceOptions(retain_on_delete=True),
)
