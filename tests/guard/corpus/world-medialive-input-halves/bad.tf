resource "aws_medialive_input_security_group" "ingest" {
  whitelist_rules {
    cidr = "0.0.0.0/1"
  }
  whitelist_rules {
    cidr = "128.0.0.0/1"
  }
}
