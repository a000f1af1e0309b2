resource "aws_security_group" "api" {
  vpc_id = "vpc-0a1b2c3d4e5f60789"
}

resource "aws_vpc_security_group_ingress_rule" "low_half" {
  security_group_id = aws_security_group.api.id
  ip_protocol       = "tcp"
  from_port         = 8080
  to_port           = 8080
  cidr_ipv6         = "2600:1f18:abcd::/56"
}

resource "aws_vpc_security_group_ingress_rule" "high_half" {
  security_group_id = aws_security_group.api.id
  ip_protocol       = "tcp"
  from_port         = 8080
  to_port           = 8080
  cidr_ipv6         = "fd00::/8"
}
