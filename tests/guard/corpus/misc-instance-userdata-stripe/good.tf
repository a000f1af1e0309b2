resource "aws_instance" "billing_worker" {
  ami           = "ami-0a1b2c3d4e5f60789"
  instance_type = "m7i.large"
  subnet_id     = "subnet-0a1b2c3d4e5f60718"
  metadata_options {
    http_tokens = "required"
  }
  root_block_device {
    encrypted  = true
    kms_key_id = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
  }
  user_data = file("${path.module}/boot.sh")
}
