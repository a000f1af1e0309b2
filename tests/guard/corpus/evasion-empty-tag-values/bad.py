"""Every cost tag key is present, but the values are empty: the spend is allocated to nobody."""

import pulumi_aws as aws

aws.eks.NodeGroup(
    "infer",
    cluster_name="corpus",
    node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
    subnet_ids=["subnet-0a1b2c3d"],
    instance_types=["g6e.xlarge"],
    scaling_config={"desired_size": 0, "min_size": 0, "max_size": 2},
    tags={"CostCenter": "", "Team": " ", "Project": "corpus", "Env": "prod"},
)
