resource "aws_iam_role" "ops" {
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
  managed_policy_arns = ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"]
}

resource "aws_iam_user_policy_attachment" "alice_iam" {
  user       = "alice"
  policy_arn = "arn:aws:iam::aws:policy/IAMReadOnlyAccess"
}
