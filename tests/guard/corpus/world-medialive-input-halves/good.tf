resource "aws_medialive_input_security_group" "ingest" {
  whitelist_rules {
    cidr = "203.0.113.0/24"
  }
}
