resource "aws_sqs_queue_policy" "jobs_policy" {
  queue_url = "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:123456789012:jobs"}]})
}
