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

resource "aws_ebs_encryption_by_default" "ebs_default" {
  enabled = true
}

resource "aws_ebs_default_kms_key" "ebs_default_key" {
  key_arn = aws_kms_key.data_key.arn
}
