"""Both training pools use EFA types with every interface, in one zone's subnet created here."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"}
vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16", tags=TAGS)
aws.ec2.FlowLog(
    "vpc-flow",
    vpc_id=vpc.id,
    traffic_type="ALL",
    log_destination_type="s3",
    log_destination="arn:aws:s3:::corpus-flow-logs",
    tags=TAGS,
)
subnet = aws.ec2.Subnet("train-a", vpc_id=vpc.id, cidr_block="10.0.1.0/24", availability_zone="us-east-1a", tags=TAGS)
efa_lt = aws.ec2.LaunchTemplate(
    "efa-lt",
    metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 1},
    block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": "alias/corpus"}}],
    network_interfaces=[
        {
            "network_card_index": i,
            "device_index": 0 if i == 0 else 1,
            "interface_type": "efa" if i == 0 else "efa-only",
            "associate_public_ip_address": "false",
        }
        for i in range(32)
    ],
    tags=TAGS,
    tag_specifications=[{"resource_type": k, "tags": TAGS} for k in ("instance", "volume")],
)


def pool(name: str) -> None:
    aws.eks.NodeGroup(
        name,
        cluster_name="corpus",
        node_role_arn="arn:aws:iam::123456789012:role/corpus-node",
        subnet_ids=[subnet.id],
        instance_types=["p5.48xlarge"],
        launch_template={"id": efa_lt.id, "version": efa_lt.latest_version},
        scaling_config={"desired_size": 0, "min_size": 0, "max_size": 4},
        labels={"gpucloud.io/workload": "training"},
        tags=TAGS,
    )


pool("literal-subnets")
pool("no-efa")
