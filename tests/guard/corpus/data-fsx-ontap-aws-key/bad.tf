provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_fsx_ontap_file_system" "ontap_home" {
  deployment_type     = "SINGLE_AZ_1"
  storage_capacity    = 1024
  throughput_capacity = 128
  subnet_ids          = ["subnet-0a1b2c3d4e5f60718"]
  preferred_subnet_id = "subnet-0a1b2c3d4e5f60718"
  tags                = local.tags
}
