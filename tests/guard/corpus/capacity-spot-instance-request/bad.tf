resource "aws_spot_instance_request" "box" {
  ami                         = "ami-0123456789abcdef0"
  instance_type               = "g4dn.xlarge"
  associate_public_ip_address = true
  root_block_device {
    encrypted = false
  }
  tags = { CostCenter = "ml", Team = "ml", Project = "corpus", Env = "prod" }
}
