locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_eks_node_group" "train" {
  cluster_name   = "corpus"
  node_role_arn  = "arn:aws:iam::123456789012:role/corpus-node"
  subnet_ids     = ["subnet-0a1b2c3d"]
  instance_types = ["p5.48xlarge"]
  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = 2
  }
  tags = local.tags
}
