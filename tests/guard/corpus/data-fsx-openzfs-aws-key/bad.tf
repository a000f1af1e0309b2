provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_fsx_openzfs_file_system" "zfs_cache" {
  deployment_type     = "SINGLE_AZ_1"
  storage_capacity    = 64
  throughput_capacity = 64
  subnet_ids          = ["subnet-0a1b2c3d4e5f60718"]
  tags                = local.tags
}
