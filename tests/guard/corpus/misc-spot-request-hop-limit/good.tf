resource "aws_kms_key" "key" {
  enable_key_rotation = true
}

resource "aws_spot_instance_request" "box" {
  ami                         = "ami-0123456789abcdef0"
  instance_type               = "g6e.xlarge"
  associate_public_ip_address = false
  subnet_id                   = "subnet-0a1b2c3d4e5f60789"
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }
  root_block_device {
    encrypted  = true
    kms_key_id = aws_kms_key.key.arn
  }
  tags = { CostCenter = "ml", Team = "ml", Project = "corpus", Env = "prod" }
}
