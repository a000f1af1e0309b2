resource "aws_iam_role_policy_attachments_exclusive" "dev_role_policies" {
  role_name = "dev-role"
  policy_arns = [
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
  ]
}
