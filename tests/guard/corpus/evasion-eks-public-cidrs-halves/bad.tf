resource "aws_eks_cluster" "ml_cluster" {
  name     = "ml-cluster"
  role_arn = "arn:aws:iam::123456789012:role/eks-cluster"
  vpc_config {
    subnet_ids              = ["subnet-0a1b2c3d4e5f60718", "subnet-0a1b2c3d4e5f60719"]
    endpoint_private_access = true
    endpoint_public_access  = true
    public_access_cidrs     = ["0.0.0.0/1", "128.0.0.0/1"]
  }
  encryption_config {
    provider {
      key_arn = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
    }
    resources = ["secrets"]
  }
  enabled_cluster_log_types = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
}
