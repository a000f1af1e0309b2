provider "aws" {
  region = "us-east-1"
}

locals {
  tags = { CostCenter = "ml-platform", Team = "platform", Project = "corpus", Env = "prod" }
}

resource "aws_db_instance" "mlflow_db" {
  engine                      = "postgres"
  engine_version              = "16.4"
  instance_class              = "db.r6g.large"
  allocated_storage           = 200
  username                    = "mlflow"
  manage_master_user_password = true
  db_subnet_group_name        = "ml-private"
  tags                        = local.tags
}
