resource "aws_kms_key" "key" {
  enable_key_rotation = true
}

resource "aws_launch_template" "lt" {
  image_id      = "ami-0123456789abcdef0"
  instance_type = "g6e.12xlarge"
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      encrypted  = true
      kms_key_id = aws_kms_key.key.arn
    }
  }
}

resource "aws_spot_fleet_request" "fleet" {
  iam_fleet_role  = "arn:aws:iam::123456789012:role/aws-ec2-spot-fleet-tagging-role"
  target_capacity = 2
  launch_template_config {
    launch_template_specification {
      id      = aws_launch_template.lt.id
      version = "$Latest"
    }
    overrides {
      instance_type = "g6e.12xlarge"
      subnet_id     = "subnet-0a1b2c3d4e5f60789"
    }
  }
}
