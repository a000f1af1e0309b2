resource "aws_security_group" "web" {
  vpc_id = "vpc-0a1b2c3d4e5f60789"
  tags   = { "gpucloud.io/load-balancer" = "true" }
}

resource "aws_vpc_security_group_ingress_rule" "https" {
  security_group_id = aws_security_group.web.id
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_ingress_rule" "anything" {
  security_group_id = aws_security_group.web.id
  ip_protocol       = "-1"
  cidr_ipv6         = "::0/0"
}
