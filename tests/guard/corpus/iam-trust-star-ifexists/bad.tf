resource "aws_iam_role" "partner_access" {
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole", "Condition": {"StringEqualsIfExists": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}}}]
  })
}
