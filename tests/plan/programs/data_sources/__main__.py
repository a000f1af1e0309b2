"""Data sources a foreign program looks up: a hosted zone by name, the Region's zones, a certificate, a
security group; plain and output forms."""

import pulumi
import pulumi_aws as aws

zone = aws.route53.get_zone(name="example.com", private_zone=False)
# A program that checks what it looked up, as public examples do.
assert zone.name == "example.com", zone.name
cert = aws.acm.get_certificate(domain="app.example.com", statuses=["ISSUED"])
aws.route53.Record(
    "app",
    zone_id=zone.zone_id,
    name=f"app.{zone.name}",
    type="CNAME",
    ttl=300,
    records=[cert.domain],
)
zones = aws.get_availability_zones(state="available")
vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
for i, az in enumerate(zones.names):
    aws.ec2.Subnet(f"subnet-{az}", vpc_id=vpc.id, availability_zone=az, cidr_block=f"10.0.{i}.0/24")
default_sg = aws.ec2.get_security_group(name="default", vpc_id="vpc-0aaaabbbbccccdddd")
lookup = aws.route53.get_zone_output(name="internal.example.com")
pulumi.export("zoneName", lookup.name)
pulumi.export("zones", zones.names)
pulumi.export("zoneIds", zones.zone_ids)
pulumi.export("sgName", default_sg.name)
pulumi.export("certDomain", cert.domain)
