locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_kms_key" "key" {
  enable_key_rotation = true
  tags                = local.tags
}

resource "aws_s3_bucket" "a_first" {
  bucket = "corpus-a-first"
  tags   = local.tags
}

resource "aws_s3_bucket_public_access_block" "a_first" {
  bucket                  = aws_s3_bucket.a_first.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "a_first" {
  bucket = aws_s3_bucket.a_first.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.key.arn
    }
    bucket_key_enabled = true
  }
}

data "aws_iam_policy_document" "a_first_tls" {
  statement {
    sid       = "DenyPlaintext"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.a_first.arn, "${aws_s3_bucket.a_first.arn}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "a_first" {
  bucket = aws_s3_bucket.a_first.id
  policy = data.aws_iam_policy_document.a_first_tls.json
}

resource "aws_s3_bucket" "z_after" {
  bucket = "corpus-z-after"
  tags   = local.tags
}

resource "aws_s3_bucket_public_access_block" "z_after" {
  bucket                  = aws_s3_bucket.z_after.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "z_after" {
  bucket = aws_s3_bucket.z_after.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.key.arn
    }
    bucket_key_enabled = true
  }
}

data "aws_iam_policy_document" "z_after_tls" {
  statement {
    sid       = "DenyPlaintext"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.z_after.arn, "${aws_s3_bucket.z_after.arn}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "z_after" {
  bucket = aws_s3_bucket.z_after.id
  policy = data.aws_iam_policy_document.z_after_tls.json
}
