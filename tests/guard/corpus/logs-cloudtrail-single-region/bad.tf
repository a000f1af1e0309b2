provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_kms_key" "data_key" {
  description             = "corpus data"
  enable_key_rotation     = true
  deletion_window_in_days = 30
}

resource "aws_cloudtrail" "org_audit" {
  name                       = "org-audit"
  s3_bucket_name             = "corpus-audit-logs"
  enable_log_file_validation = true
  kms_key_id                 = aws_kms_key.data_key.arn
  tags                       = local.tags
}
