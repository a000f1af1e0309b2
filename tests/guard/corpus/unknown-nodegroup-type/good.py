"""Two p5 nodes, the type written out."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
aws.eks.NodeGroup(
    "train",
    cluster_name="corpus",
    node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
    subnet_ids=["subnet-0a1b2c3d"],
    instance_types=["p5.48xlarge"],
    scaling_config={"desired_size": 0, "min_size": 0, "max_size": 2},
    tags=TAGS,
)
