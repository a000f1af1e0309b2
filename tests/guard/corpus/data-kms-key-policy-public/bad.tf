resource "aws_kms_key" "data_key" {
  enable_key_rotation = true
  policy = jsonencode({ Version = "2012-10-17", Statement = [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:*", "Resource": "*"}] })
}
