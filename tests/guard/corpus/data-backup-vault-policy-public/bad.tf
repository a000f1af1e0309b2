resource "aws_backup_vault_policy" "checkpoints_policy" {
  backup_vault_name = "checkpoints"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "backup:CopyIntoBackupVault", "Resource": "*"}]})
}
