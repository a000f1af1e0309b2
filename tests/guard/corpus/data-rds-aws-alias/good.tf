resource "aws_rds_cluster" "feature_store" {
  engine                      = "aurora-postgresql"
  master_username             = "features"
  manage_master_user_password = true
  storage_encrypted           = true
  kms_key_id                  = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
}
