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

resource "aws_efs_file_system" "datasets_efs" {
  encrypted       = true
  kms_key_id      = aws_kms_key.data_key.arn
  throughput_mode = "elastic"
  tags            = local.tags
}
