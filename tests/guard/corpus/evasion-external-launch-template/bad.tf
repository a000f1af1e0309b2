resource "aws_instance" "trainer" {
  instance_type = "g6e.xlarge"
  launch_template {
    id      = "lt-0123456789abcdef0"
    version = "$Latest"
  }
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}
