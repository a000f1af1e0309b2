resource "aws_lambda_function" "notifier" {
  function_name = "notifier"
  role          = "arn:aws:iam::123456789012:role/notifier"
  runtime       = "python3.12"
  handler       = "app.handler"
  s3_bucket     = "corpus-artifacts"
  s3_key        = "notifier.zip"
  environment {
    variables = { SLACK_TOKEN_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-AbCdEf" }
  }
}
