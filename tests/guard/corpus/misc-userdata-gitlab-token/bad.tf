resource "aws_launch_template" "gpu_nodes" {
  image_id      = "ami-0a1b2c3d4e5f60789"
  instance_type = "m7i.large"
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      encrypted   = true
      kms_key_id  = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
      volume_size = 100
    }
  }
  user_data = base64encode(file("${path.module}/boot.sh"))
}
