locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_kms_key" "data_key" {
  enable_key_rotation = true
  tags                = local.tags
}

# The name is only known once the key exists.
resource "aws_s3_bucket" "computed_name" {
  bucket = "data-${substr(aws_kms_key.data_key.key_id, 0, 8)}"
  tags   = local.tags
}

resource "aws_s3_bucket_public_access_block" "computed_name" {
  bucket                  = aws_s3_bucket.computed_name.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "computed_name" {
  bucket = aws_s3_bucket.computed_name.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.data_key.arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "computed_name" {
  bucket = aws_s3_bucket.computed_name.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid = "DenyPlaintext", Effect = "Deny", Principal = "*", Action = "s3:*", Resource = "*"
      Condition = { Bool = { "aws:SecureTransport" = "false" } }
    }]
  })
}

resource "aws_s3_bucket_versioning" "computed_name" {
  bucket = aws_s3_bucket.computed_name.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket" "insecure" {
  bucket = "corpus-insecure-data"
  tags   = local.tags
}
