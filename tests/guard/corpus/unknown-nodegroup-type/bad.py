"""200 on-demand p5 nodes whose instance type is computed: family, count cap and spend cap cannot pass it."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
choice = aws.ssm.Parameter("gpu-type", type="String", value="p5.48xlarge", tags=TAGS)
aws.eks.NodeGroup(
    "train",
    cluster_name="corpus",
    node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
    subnet_ids=["subnet-0a1b2c3d"],
    # The type is read back after the parameter is written: unknown until then.
    instance_types=[choice.version.apply(lambda _: "p5.48xlarge")],
    scaling_config={"desired_size": 0, "min_size": 0, "max_size": 200},
    tags=TAGS,
)
