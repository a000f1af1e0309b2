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

resource "aws_ebs_volume" "scratch_vol" {
  availability_zone = "us-east-1a"
  size              = 500
  type              = "gp3"
  encrypted         = true
  kms_key_id        = aws_kms_key.data_key.arn
  tags              = local.tags
}
