resource "aws_fsx_lustre_file_system" "train_lustre" {
  deployment_type             = "PERSISTENT_2"
  per_unit_storage_throughput = 250
  storage_capacity            = 2400
  subnet_ids                  = ["subnet-0a1b2c3d4e5f60718"]
  kms_key_id                  = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
}
