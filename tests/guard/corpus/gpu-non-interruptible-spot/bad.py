"""A node group marked not interruptible (gpucloud.io/interruptible: "false") that buys spot anyway."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"}
aws.eks.NodeGroup(
    "serving",
    cluster_name="prod",
    node_role_arn="arn:aws:iam::123456789012:role/node",
    subnet_ids=["subnet-0a1b2c3d4e5f60789"],
    instance_types=["g6e.12xlarge"],
    capacity_type="SPOT",
    scaling_config={"min_size": 0, "max_size": 2, "desired_size": 0},
    labels={"gpucloud.io/interruptible": "false", "gpucloud.io/workload": "inference"},
    tags=TAGS,
)
