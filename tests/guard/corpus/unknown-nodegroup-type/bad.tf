locals {
  tags = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_ssm_parameter" "gpu_type" {
  name  = "gpu-type"
  type  = "String"
  value = "p5.48xlarge"
  tags  = local.tags
}

resource "aws_eks_node_group" "train" {
  cluster_name  = "corpus"
  node_role_arn = "arn:aws:iam::123456789012:role/corpus-node"
  subnet_ids    = ["subnet-0a1b2c3d"]
  # Known only after the parameter is written.
  instance_types = [aws_ssm_parameter.gpu_type.version > 0 ? "p5.48xlarge" : "p5.48xlarge"]
  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = 200
  }
  tags = local.tags
}
