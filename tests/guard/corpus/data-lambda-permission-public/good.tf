resource "aws_lambda_permission" "invoke_anyone" {
  action        = "lambda:InvokeFunction"
  function_name = "batch-submitter"
  principal     = "events.amazonaws.com"
  source_arn    = "arn:aws:events:us-east-1:123456789012:rule/nightly"
}
