resource "aws_secretsmanager_secret" "hf_token" {
  kms_key_id = "alias/aws/secretsmanager"
}
