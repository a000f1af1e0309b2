resource "aws_launch_configuration" "lc" {
  image_id                    = "ami-0123456789abcdef0"
  instance_type               = "g4dn.12xlarge"
  associate_public_ip_address = true
  metadata_options {
    http_tokens = "optional"
  }
  root_block_device {
    encrypted   = false
    volume_size = 200
  }
}

resource "aws_autoscaling_group" "asg" {
  launch_configuration = aws_launch_configuration.lc.name
  min_size             = 0
  max_size             = 2
  vpc_zone_identifier  = ["subnet-0a1b2c3d4e5f60789"]
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
