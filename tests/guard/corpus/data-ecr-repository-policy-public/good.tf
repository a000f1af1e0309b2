resource "aws_ecr_repository_policy" "trainer_policy" {
  repository = "trainer"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"], "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}}}]})
}
