locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_vpc" "vpc" {
  cidr_block = "10.0.0.0/16"
  tags       = local.tags
}

resource "aws_subnet" "train_a" {
  vpc_id            = aws_vpc.vpc.id
  cidr_block        = "10.0.1.0/24"
  availability_zone = "us-east-1a"
  tags              = local.tags
}

resource "aws_launch_template" "efa_lt" {
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      encrypted  = "true"
      kms_key_id = "alias/corpus"
    }
  }
  dynamic "network_interfaces" {
    for_each = range(32)
    content {
      network_card_index          = network_interfaces.value
      device_index                = network_interfaces.value == 0 ? 0 : 1
      interface_type              = network_interfaces.value == 0 ? "efa" : "efa-only"
      associate_public_ip_address = "false"
    }
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

resource "aws_eks_node_group" "literal_subnets" {
  cluster_name   = "corpus"
  node_role_arn  = "arn:aws:iam::123456789012:role/corpus-node"
  subnet_ids     = ["subnet-0aaa1111", "subnet-0bbb2222"]
  instance_types = ["p5.48xlarge"]
  launch_template {
    id      = aws_launch_template.efa_lt.id
    version = aws_launch_template.efa_lt.latest_version
  }
  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = 4
  }
  labels = { "gpucloud.io/workload" = "training" }
  tags   = local.tags
}

resource "aws_eks_node_group" "no_efa" {
  cluster_name   = "corpus"
  node_role_arn  = "arn:aws:iam::123456789012:role/corpus-node"
  subnet_ids     = [aws_subnet.train_a.id]
  instance_types = ["g6e.2xlarge"]
  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = 4
  }
  labels = { "gpucloud.io/workload" = "training" }
  tags   = local.tags
}

resource "aws_flow_log" "vpc_flow" {
  vpc_id               = aws_vpc.vpc.id
  traffic_type         = "ALL"
  log_destination_type = "s3"
  log_destination      = "arn:aws:s3:::corpus-flow-logs"
}
