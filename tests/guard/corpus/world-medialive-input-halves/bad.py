"""Two /1 allow rules are the whole IPv4 internet."""

import pulumi_aws as aws

aws.medialive.InputSecurityGroup(
    "ingest",
    whitelist_rules=[{"cidr": "0.0.0.0/1"}, {"cidr": "128.0.0.0/1"}],
)
