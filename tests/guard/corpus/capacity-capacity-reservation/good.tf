resource "aws_ec2_capacity_reservation" "odcr" {
  instance_type     = "g6e.12xlarge"
  instance_count    = 2
  availability_zone = "us-east-1a"
  instance_platform = "Linux/UNIX"
  tags              = { CostCenter = "ml", Team = "ml", Project = "corpus", Env = "prod" }
}
