resource "aws_ec2_capacity_reservation" "odcr" {
  instance_type     = "p3.16xlarge"
  instance_count    = 17
  availability_zone = "us-east-1a"
  instance_platform = "Linux/UNIX"
  tags              = { CostCenter = "ml", Team = "ml", Project = "corpus", Env = "prod" }
}
