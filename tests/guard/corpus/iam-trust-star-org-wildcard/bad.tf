resource "aws_iam_role" "partner_access" {
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole", "Condition": {"StringLike": {"aws:PrincipalOrgID": "*"}}}]
  })
}
