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

resource "aws_autoscaling_group" "workers" {
  min_size            = 0
  max_size            = 4
  vpc_zone_identifier = ["subnet-0a1b2c3d4e5f60789"]
  mixed_instances_policy {
    launch_template {
      launch_template_specification {
        launch_template_id = aws_launch_template.lt.id
        version            = "$Latest"
      }
      override {
        instance_requirements {
          vcpu_count {
            min = 4
            max = 8
          }
          memory_mib {
            min = 16384
          }
        }
      }
    }
  }
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
