# Terraform AWS provider 6.x no longer takes these settings inline on aws_s3_bucket; the closest honest twin uses
# the separate resources (see expect.json tf_note).
locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_s3_bucket" "inline" {
  bucket = "corpus-inline"
  tags   = local.tags
}

resource "aws_s3_bucket_server_side_encryption_configuration" "inline" {
  bucket = aws_s3_bucket.inline.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_policy" "inline" {
  bucket = aws_s3_bucket.inline.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect = "Allow", Principal = { AWS = "arn:aws:iam::123456789012:root" }, Action = "s3:GetObject"
      Resource = "arn:aws:s3:::corpus-inline/*"
    }]
  })
}

resource "aws_s3_bucket_public_access_block" "inline" {
  bucket                  = aws_s3_bucket.inline.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}
