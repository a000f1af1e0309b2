provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_ebs_volume" "scratch_vol" {
  availability_zone = "us-east-1a"
  size              = 500
  type              = "gp3"
  encrypted         = false
  tags              = local.tags
}
