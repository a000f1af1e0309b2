resource "aws_iam_role" "partner_access" {
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]
  })
}
