resource "aws_sqs_queue" "jobs" {
  sqs_managed_sse_enabled = false
}
