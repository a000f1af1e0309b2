resource "aws_rds_cluster" "feature_store" {
  engine                      = "aurora-postgresql"
  master_username             = "features"
  manage_master_user_password = true
  storage_encrypted           = true
  kms_key_id                  = "arn:aws:kms:us-east-1:123456789012:alias/aws/rds"
}
