"""One pool's max size is computed (bad twin); here every size is written out."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}


def pool(name: str, max_size) -> None:
    aws.eks.NodeGroup(
        name,
        cluster_name="corpus",
        node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
        subnet_ids=["subnet-0a1b2c3d"],
        instance_types=["p5.48xlarge"],
        scaling_config={"desired_size": 0, "min_size": 0, "max_size": max_size},
        tags=TAGS,
    )


pool("computed-max", 4)
pool("over-cap", 8)
