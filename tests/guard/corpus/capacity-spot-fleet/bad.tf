resource "aws_spot_fleet_request" "fleet" {
  iam_fleet_role  = "arn:aws:iam::123456789012:role/aws-ec2-spot-fleet-tagging-role"
  target_capacity = 2
  launch_specification {
    ami                         = "ami-0123456789abcdef0"
    instance_type               = "p3.8xlarge"
    associate_public_ip_address = true
    root_block_device {
      encrypted   = false
      volume_size = 200
    }
  }
}
