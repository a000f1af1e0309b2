resource "aws_kms_key" "key" {
  enable_key_rotation = true
}

resource "aws_launch_template" "block_lt" {
  image_id      = "ami-0123456789abcdef0"
  instance_type = "p5.48xlarge"
  instance_market_options {
    market_type = "capacity-block"
  }
  capacity_reservation_specification {
    capacity_reservation_target {
      capacity_reservation_id = "cr-0a1b2c3d4e5f60789"
    }
  }
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

resource "aws_autoscaling_group" "block" {
  launch_template {
    id      = aws_launch_template.block_lt.id
    version = "$Latest"
  }
  min_size            = 0
  max_size            = 2
  vpc_zone_identifier = ["subnet-0a1b2c3d4e5f60789"]
  tag {
    key                 = "CostCenter"
    value               = "ml"
    propagate_at_launch = true
  }
  tag {
    key                 = "Team"
    value               = "ml"
    propagate_at_launch = true
  }
  tag {
    key                 = "Project"
    value               = "corpus"
    propagate_at_launch = true
  }
  tag {
    key                 = "Env"
    value               = "prod"
    propagate_at_launch = true
  }
}
