resource "aws_kinesis_stream" "telemetry" {
  shard_count     = 1
  encryption_type = "NONE"
}
