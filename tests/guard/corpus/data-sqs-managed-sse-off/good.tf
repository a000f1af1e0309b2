resource "aws_sqs_queue" "jobs" {
  sqs_managed_sse_enabled = false
  kms_master_key_id       = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
}
