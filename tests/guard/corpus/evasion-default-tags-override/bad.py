"""The provider's default tags are complete, but the resource overrides two of them with empty values (resource
tags win over default tags): the node group's cost is allocated to nobody."""

import pulumi
import pulumi_aws as aws

tagged = aws.Provider(
    "tagged",
    region="us-east-1",
    default_tags={"tags": {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}},
)
aws.eks.NodeGroup(
    "infer",
    cluster_name="corpus",
    node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
    subnet_ids=["subnet-0a1b2c3d"],
    instance_types=["g6e.xlarge"],
    scaling_config={"desired_size": 0, "min_size": 0, "max_size": 2},
    tags={"CostCenter": "", "Team": ""},
    opts=pulumi.ResourceOptions(provider=tagged),
)
