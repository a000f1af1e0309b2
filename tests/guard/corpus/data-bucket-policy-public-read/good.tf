resource "aws_s3_bucket_policy" "datasets_policy" {
  bucket = "corpus-datasets"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::corpus-datasets/*", "Condition": {"StringEquals": {"aws:SourceVpce": "vpce-0a1b2c3d4e5f60789"}}}]})
}
