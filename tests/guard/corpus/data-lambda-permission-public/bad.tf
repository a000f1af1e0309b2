resource "aws_lambda_permission" "invoke_anyone" {
  action        = "lambda:InvokeFunction"
  function_name = "batch-submitter"
  principal     = "*"
}
