resource "aws_eks_node_group" "pretrain" {
  cluster_name   = "prod"
  node_role_arn  = "arn:aws:iam::123456789012:role/node"
  subnet_ids     = ["subnet-0a1b2c3d4e5f60789"]
  instance_types = ["g5.12xlarge"]
  scaling_config {
    min_size     = 0
    max_size     = 1
    desired_size = 0
  }
  labels = { "gpucloud.io/workload" = "pretraining" }
  tags   = { CostCenter = "ml", Team = "ml", Project = "corpus", Env = "prod" }
}
