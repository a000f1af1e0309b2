resource "aws_kms_key" "key" {
  enable_key_rotation = true
}

resource "aws_launch_template" "lt" {
  image_id = "ami-0123456789abcdef0"
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

resource "aws_ec2_fleet" "fleet" {
  type = "maintain"
  launch_template_config {
    launch_template_specification {
      launch_template_id = aws_launch_template.lt.id
      version            = "$Latest"
    }
    override {
      instance_type = "p3.16xlarge"
    }
  }
  target_capacity_specification {
    default_target_capacity_type = "on-demand"
    total_target_capacity        = 40
  }
}
