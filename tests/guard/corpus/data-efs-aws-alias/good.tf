resource "aws_efs_file_system" "datasets_efs" {
  encrypted       = true
  kms_key_id      = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
  throughput_mode = "elastic"
}
