locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_ssm_parameter" "pool_size" {
  name  = "pool-size"
  type  = "String"
  value = "4"
  tags  = local.tags
}

resource "aws_eks_node_group" "computed_max" {
  cluster_name   = "corpus"
  node_role_arn  = "arn:aws:iam::123456789012:role/corpus-node"
  subnet_ids     = ["subnet-0a1b2c3d"]
  instance_types = ["p5.48xlarge"]
  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = aws_ssm_parameter.pool_size.version > 0 ? 4 : 4
  }
  tags = local.tags
}

resource "aws_eks_node_group" "over_cap" {
  cluster_name   = "corpus"
  node_role_arn  = "arn:aws:iam::123456789012:role/corpus-node"
  subnet_ids     = ["subnet-0a1b2c3d"]
  instance_types = ["p5.48xlarge"]
  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = 20
  }
  tags = local.tags
}
