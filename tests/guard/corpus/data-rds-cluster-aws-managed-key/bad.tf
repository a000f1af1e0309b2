provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_rds_cluster" "feature_store" {
  engine                      = "aurora-postgresql"
  master_username             = "features"
  manage_master_user_password = true
  storage_encrypted           = true
  tags                        = local.tags
}
