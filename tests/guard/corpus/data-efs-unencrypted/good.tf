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

resource "aws_efs_file_system" "shared_home" {
  performance_mode = "generalPurpose"
  encrypted        = true
  kms_key_id       = aws_kms_key.data_KEY_ARN
  tags             = local.tags
}
