resource "aws_s3_bucket_policy" "models_policy" {
  bucket = "corpus-models"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::corpus-models/*", "Condition": {"IpAddress": {"aws:SourceIp": ["0.0.0.0/1", "128.0.0.0/1"]}}}]})
}
