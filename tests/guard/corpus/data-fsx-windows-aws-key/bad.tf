provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_fsx_windows_file_system" "win_share" {
  active_directory_id = "d-1234567890"
  storage_capacity    = 32
  throughput_capacity = 32
  subnet_ids          = ["subnet-0a1b2c3d4e5f60718"]
  tags                = local.tags
}
