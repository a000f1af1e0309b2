provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

locals {
  # The platform data key, created and rotated by the platform stack.
  key_arn = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
}

resource "aws_ebs_encryption_by_default" "ebs_default" {
  enabled = true
}

resource "aws_ebs_default_kms_key" "ebs_default_key" {
  key_arn = aws_kms_key.data_KEY_ARN
}
