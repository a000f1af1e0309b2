resource "aws_efs_file_system_policy" "datasets_efs_policy" {
  file_system_id = "fs-0a1b2c3d4e5f60789"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:role/trainer"}, "Action": ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"], "Resource": "*"}]})
}
