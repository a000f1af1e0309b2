"""An Aurora instance with a public endpoint: its DNS name resolves to a public address."""

import pulumi_aws as aws

aws.rds.ClusterInstance(
    "db-1",
    cluster_identifier="features",
    instance_class="db.r6g.large",
    engine="aurora-postgresql",
    publicly_accessible=True,
)
