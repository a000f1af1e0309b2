resource "aws_kms_key_policy" "data_key_policy" {
  key_id = "0a1b2c3d-4e5f-6789-abcd-ef0123456789"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*"}]})
}
