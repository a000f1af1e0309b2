provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_vpc" "gpu_vpc" {
  cidr_block           = "10.60.0.0/16"
  enable_dns_hostnames = true
  tags                 = local.tags
}

resource "aws_default_security_group" "gpu_vpc_default" {
  vpc_id = aws_vpc.gpu_vpc.id
}
