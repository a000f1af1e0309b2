"""The good twin: reached from inside the VPC only."""

import pulumi_aws as aws

aws.rds.ClusterInstance(
    "db-1",
    cluster_identifier="features",
    instance_class="db.r6g.large",
    engine="aurora-postgresql",
    publicly_accessible=False,
)
