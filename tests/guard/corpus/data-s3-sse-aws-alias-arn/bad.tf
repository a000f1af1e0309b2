resource "aws_s3_bucket" "datasets" {
  bucket = "corpus-datasets-prod"
}

resource "aws_s3_bucket_public_access_block" "datasets_pab" {
  bucket                  = aws_s3_bucket.datasets.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "datasets_sse" {
  bucket = aws_s3_bucket.datasets.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = "arn:aws:kms:us-east-1:123456789012:alias/aws/s3"
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "datasets_tls" {
  bucket = aws_s3_bucket.datasets.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "DenyPlaintext"
      Effect    = "Deny"
      Principal = "*"
      Action    = "s3:*"
      Resource  = ["arn:aws:s3:::corpus-datasets-prod", "arn:aws:s3:::corpus-datasets-prod/*"]
      Condition = { Bool = { "aws:SecureTransport" = "false" } }
    }]
  })
}
