provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_efs_file_system" "datasets_efs" {
  encrypted       = true
  throughput_mode = "elastic"
  tags            = local.tags
}
