"""One pool's max size is computed; a second pool can reach 160 GPUs, above prod's per-pool cap of 128."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
size = aws.ssm.Parameter("pool-size", type="String", value="4", tags=TAGS)


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


pool("computed-max", size.version.apply(lambda _: 4))
pool("over-cap", 20)
