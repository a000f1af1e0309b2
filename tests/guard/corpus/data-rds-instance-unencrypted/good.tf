provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_kms_key" "data_key" {
  description             = "corpus data"
  enable_key_rotation     = true
  deletion_window_in_days = 30
}

resource "aws_db_instance" "mlflow_db" {
  engine                      = "postgres"
  engine_version              = "16.4"
  instance_class              = "db.r6g.large"
  allocated_storage           = 200
  username                    = "mlflow"
  manage_master_user_password = true
  db_subnet_group_name        = "ml-private"
  storage_encrypted           = true
  kms_key_id                  = aws_kms_key.data_key.arn
  tags                        = local.tags
}
