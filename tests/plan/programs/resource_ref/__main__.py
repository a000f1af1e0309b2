"""Resource objects passed as inputs, as pulumi/examples' aws-py-dynamicresource passes `vpc_id=app_vpc`."""

import pulumi
import pulumi_aws as aws

vpc = aws.ec2.Vpc("app-vpc", cidr_block="172.31.0.0/16", enable_dns_hostnames=True)
# The Resource object itself where the provider takes its ID.
subnet = aws.ec2.Subnet("app-subnet", cidr_block="172.31.0.0/20", availability_zone="us-east-2a", vpc_id=vpc)
assoc = aws.ec2.MainRouteTableAssociation("main-rt", route_table_id="rtb-0123456789abcdef0", vpc_id=vpc)
# An existing resource read by ID has a known ID, so the reference to it is known too.
default_vpc = aws.ec2.Vpc.get("default-vpc", "vpc-0aaaabbbbccccdddd")
sg = aws.ec2.SecurityGroup("sg", vpc_id=default_vpc, description="reads an existing VPC")
# A list of Resource objects, and a Resource object exported.
group = aws.rds.SubnetGroup("db-subnets", subnet_ids=[subnet])
pulumi.export("subnetVpc", subnet.vpc_id)
pulumi.export("sgVpc", sg.vpc_id)
pulumi.export("vpc", vpc)
