resource "aws_secretsmanager_secret_policy" "hf_token_policy" {
  secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:role/trainer"}, "Action": "secretsmanager:GetSecretValue", "Resource": "*"}]})
}
