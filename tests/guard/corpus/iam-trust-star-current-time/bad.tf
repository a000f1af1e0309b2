resource "aws_iam_role" "partner_access" {
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole", "Condition": {"DateLessThan": {"aws:CurrentTime": "2027-01-01T00:00:00Z"}}}]
  })
}
