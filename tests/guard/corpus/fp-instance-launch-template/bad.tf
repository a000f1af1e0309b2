locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_launch_template" "gpu_lt" {
  image_id = "ami-0123456789abcdef0"
  metadata_options {
    http_tokens                 = "optional"
    http_put_response_hop_limit = 1
  }
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      encrypted  = "false"
    }
  }
  network_interfaces {
    device_index                = 0
    associate_public_ip_address = "true"
  }
  tags = local.tags
  tag_specifications {
    resource_type = "instance"
    tags          = local.tags
  }
  tag_specifications {
    resource_type = "volume"
    tags          = local.tags
  }
}

resource "aws_instance" "trainer" {
  instance_type = "g6e.xlarge"
  launch_template {
    id      = aws_launch_template.gpu_lt.id
    version = "$Latest"
  }
  tags = local.tags
}
