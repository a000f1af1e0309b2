resource "aws_rds_cluster_instance" "db_1" {
  cluster_identifier  = "features"
  instance_class      = "db.r6g.large"
  engine              = "aurora-postgresql"
  publicly_accessible = true
}
