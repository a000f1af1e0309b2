resource "aws_ec2_managed_prefix_list" "partners" {
  name           = "partners"
  address_family = "IPv4"
  max_entries    = 4
  entry {
    cidr        = "0.0.0.0/1"
    description = "partners a-m"
  }
  entry {
    cidr        = "128.0.0.0/1"
    description = "n-z"
  }
}

resource "aws_security_group" "ingest" {
  vpc_id = "vpc-0a1b2c3d4e5f60789"
}

resource "aws_security_group_rule" "partners_in" {
  type              = "ingress"
  security_group_id = aws_security_group.ingest.id
  protocol          = "tcp"
  from_port         = 0
  to_port           = 65535
  prefix_list_ids   = [aws_ec2_managed_prefix_list.partners.id]
}
