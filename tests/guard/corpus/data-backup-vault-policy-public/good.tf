resource "aws_backup_vault_policy" "checkpoints_policy" {
  backup_vault_name = "checkpoints"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "backup:CopyIntoBackupVault", "Resource": "*"}]})
}
