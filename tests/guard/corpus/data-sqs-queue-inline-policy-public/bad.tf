resource "aws_sqs_queue" "jobs" {
  sqs_managed_sse_enabled = true
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sqs:ReceiveMessage", "Resource": "arn:aws:sqs:us-east-1:123456789012:jobs", "Condition": {"Bool": {"aws:SecureTransport": "true"}}}]})
}
