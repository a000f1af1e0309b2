provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_efs_file_system" "shared_home" {
  performance_mode = "generalPurpose"
  tags             = local.tags
}
