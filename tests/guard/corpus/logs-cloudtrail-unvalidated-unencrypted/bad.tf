provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_cloudtrail" "org_audit" {
  name                  = "org-audit"
  s3_bucket_name        = "corpus-audit-logs"
  is_multi_region_trail = true
  tags                  = local.tags
}
