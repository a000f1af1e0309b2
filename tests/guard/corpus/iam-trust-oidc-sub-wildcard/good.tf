resource "aws_iam_role" "partner_access" {
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{"Effect": "Allow", "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D4E5F60789ABCDEF012345678"}, "Action": "sts:AssumeRoleWithWebIdentity", "Condition": {"StringEquals": {"oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D4E5F60789ABCDEF012345678:sub": "system:serviceaccount:ml:trainer", "oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D4E5F60789ABCDEF012345678:aud": "sts.amazonaws.com"}}}]
  })
}
