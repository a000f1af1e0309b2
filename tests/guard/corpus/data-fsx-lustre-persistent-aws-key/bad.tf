provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_fsx_lustre_file_system" "train_lustre" {
  deployment_type             = "PERSISTENT_2"
  per_unit_storage_throughput = 250
  storage_capacity            = 2400
  subnet_ids                  = ["subnet-0a1b2c3d4e5f60718"]
  tags                        = local.tags
}
