resource "aws_efs_file_system" "datasets_efs" {
  encrypted       = true
  kms_key_id      = "arn:aws:kms:us-east-1:123456789012:alias/aws/elasticfilesystem"
  throughput_mode = "elastic"
}
