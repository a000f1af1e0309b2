resource "aws_iam_policy" "ops" {
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", NotAction = "iam:*", Resource = "*" }]
  })
}
