resource "aws_default_network_acl" "default_acl" {
  default_network_acl_id = "acl-0a1b2c3d4e5f60789"
  ingress {
    protocol   = "tcp"
    rule_no    = 100
    action     = "allow"
    cidr_block = "0.0.0.0/0"
    from_port  = 3389
    to_port    = 3389
  }
}
