resource "aws_network_acl" "nodes_acl" {
  vpc_id = "vpc-0a1b2c3d4e5f60789"
}

resource "aws_network_acl_rule" "rdp_0" {
  network_acl_id = aws_network_acl.nodes_acl.id
  rule_number    = 100
  egress         = false
  protocol       = "tcp"
  rule_action    = "allow"
  cidr_block     = "0.0.0.0/1"
  from_port      = 3389
  to_port        = 3389
}

resource "aws_network_acl_rule" "rdp_1" {
  network_acl_id = aws_network_acl.nodes_acl.id
  rule_number    = 101
  egress         = false
  protocol       = "tcp"
  rule_action    = "allow"
  cidr_block     = "128.0.0.0/1"
  from_port      = 3389
  to_port        = 3389
}
