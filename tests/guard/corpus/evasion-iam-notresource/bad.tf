resource "aws_iam_policy" "break_glass" {
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      { Effect = "Allow", NotAction = ["iam:PassRole"], NotResource = ["arn:aws:s3:::decoy-bucket"] },
      {
        Effect    = "Deny"
        Action    = "*"
        Resource  = "*"
        Condition = { BoolIfExists = { "aws:MultiFactorAuthPresent" = "false" } }
      },
    ]
  })
}
