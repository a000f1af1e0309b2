resource "aws_sns_topic" "alerts" {
  kms_master_key_id = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sns:Subscribe", "Resource": "arn:aws:sns:us-east-1:123456789012:alerts"}]})
}
