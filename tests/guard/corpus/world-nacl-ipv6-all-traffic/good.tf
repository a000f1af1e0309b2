resource "aws_network_acl" "nodes_acl" {
  vpc_id = "vpc-0a1b2c3d4e5f60789"
  ingress {
    protocol   = "tcp"
    rule_no    = 100
    action     = "allow"
    ipv6_cidr_block = "::/0"
    from_port  = 443
    to_port    = 443
  }
  egress {
    protocol   = "-1"
    rule_no    = 100
    action     = "allow"
    cidr_block = "0.0.0.0/0"
    from_port  = 0
    to_port    = 0
  }
}
