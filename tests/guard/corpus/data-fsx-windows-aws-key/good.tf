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

resource "aws_fsx_windows_file_system" "win_share" {
  active_directory_id = "d-1234567890"
  storage_capacity    = 32
  throughput_capacity = 32
  subnet_ids          = ["subnet-0a1b2c3d4e5f60718"]
  kms_key_id          = aws_kms_key.data_KEY_ARN
  tags                = local.tags
}
