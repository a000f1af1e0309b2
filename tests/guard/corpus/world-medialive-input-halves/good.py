"""The good twin: the studio's own network only."""

import pulumi_aws as aws

aws.medialive.InputSecurityGroup("ingest", whitelist_rules=[{"cidr": "203.0.113.0/24"}])
