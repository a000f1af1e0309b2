"""The provider's default tags leave Team empty and miss Env; the node group adds nothing."""

import pulumi
import pulumi_aws as aws

tagged = aws.Provider(
    "tagged",
    region="us-east-1",
    default_tags={"tags": {"CostCenter": "ml", "Team": "", "Project": "corpus"}},
)
aws.eks.NodeGroup(
    "infer",
    cluster_name="corpus",
    node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
    subnet_ids=["subnet-0a1b2c3d"],
    instance_types=["g6e.xlarge"],
    scaling_config={"desired_size": 0, "min_size": 0, "max_size": 2},
    opts=pulumi.ResourceOptions(provider=tagged),
)
