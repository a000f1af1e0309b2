provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_kms_key" "checkpoint_key" {
  description             = "checkpoint encryption"
  deletion_window_in_days = 30
}
