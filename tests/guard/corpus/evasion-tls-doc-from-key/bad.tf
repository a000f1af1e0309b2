locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_kms_key" "key" {
  enable_key_rotation = true
  tags                = local.tags
}

resource "aws_s3_bucket" "data" {
  bucket = "corpus-data"
  tags   = local.tags
}

resource "aws_s3_bucket_public_access_block" "data" {
  bucket                  = aws_s3_bucket.data.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "data" {
  bucket = aws_s3_bucket.data.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.key.arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "data" {
  bucket = aws_s3_bucket.data.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect = "Allow", Principal = "*", Action = "s3:GetObject", Resource = "arn:aws:s3:::corpus-data/*"
      Condition = { StringEquals = { "aws:ResourceTag/key" = aws_kms_key.key.arn } }
    }]
  })
}
