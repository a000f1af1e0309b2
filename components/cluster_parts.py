"""The parts of GpuCluster outside its class: the kubeconfig it exports, the Auto Scaling statements of its
key policy, principal slugs for resource names, and its system node group."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws

from gpucloud.components.base import (
    child,
    named_tags,
)

if TYPE_CHECKING:
    from gpucloud.components.cluster import GpuCluster, _Build


def _slug(arn: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", arn.rsplit("/", 1)[-1].lower()).strip("-") or "principal"


def kubeconfig_json(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """Kubeconfig whose user runs `aws eks get-token`, so no long-lived token is ever stored in state."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}
            ],
            "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
            "current-context": cluster_name,
            "users": [
                {
                    "name": cluster_name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": [
                                "eks",
                                "get-token",
                                "--cluster-name",
                                cluster_name,
                                "--region",
                                region,
                                "--output",
                                "json",
                            ],
                            "interactiveMode": "Never",
                        }
                    },
                }
            ],
        }
    )


def _autoscaling_statements(account: str, partition: str) -> list[dict[str, Any]]:
    # Managed and self-managed node groups launch through Auto Scaling; its service-linked role must be able to
    # use the key, or instances with KMS-encrypted volumes terminate at launch (Client.InternalError).
    slr = f"arn:{partition}:iam::{account}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"
    return [
        {
            "Sid": "AutoScalingUsesKeyForNodeVolumes",
            "Effect": "Allow",
            "Principal": {"AWS": slr},
            "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
            "Resource": "*",
        },
        {
            "Sid": "AutoScalingGrantsForAttachedVolumes",
            "Effect": "Allow",
            "Principal": {"AWS": slr},
            "Action": "kms:CreateGrant",
            "Resource": "*",
            "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
        },
    ]


def build_system_nodes(
    cluster: GpuCluster,
    b: _Build,
    subnet_ids: list[pulumi.Input[str]],
    node_policies: list[aws.iam.RolePolicyAttachment],
) -> None:
    """The system node group (on-demand, IMDSv2, encrypted volumes)."""
    name, spec, tags, cluster_name = b.name, b.spec, b.tags, b.cluster_name
    node_sg = cluster.node_security_group_id
    # --- system node group ---
    ng = spec.system_node_group
    bottlerocket = ng.ami_type.startswith("BOTTLEROCKET")
    volume_tags = named_tags(tags, f"{cluster_name}-system")
    cluster.system_launch_template = aws.ec2.LaunchTemplate(
        f"{name}-system-lt",
        description=f"{cluster_name}: system node group",
        update_default_version=True,
        vpc_security_group_ids=[cluster.cluster_security_group_id, node_sg],
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled",
            http_tokens="required",
            # Hop limit 1 keeps containers off the node role's credentials: pods get AWS access only through
            # Pod Identity or IRSA, never by reaching IMDS through the node.
            http_put_response_hop_limit=1,
            instance_metadata_tags="disabled",
        ),
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                # Bottlerocket keeps images and pods on its data volume (xvdb); AL2023 on the root volume.
                device_name="/dev/xvdb" if bottlerocket else "/dev/xvda",
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=ng.root_volume_gib,
                    volume_type="gp3",
                    encrypted="true",
                    kms_key_id=cluster.kms_key_arn,
                    delete_on_termination="true",
                ),
            )
        ],
        tag_specifications=[
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=volume_tags)
            for kind in ("instance", "volume")
        ],
        tags=named_tags(tags, f"{cluster_name}-system-lt"),
        opts=child(cluster),
    )
    cluster.system_node_group = aws.eks.NodeGroup(
        f"{name}-system",
        cluster_name=cluster.cluster.name,
        node_role_arn=cluster.node_role.arn,
        subnet_ids=subnet_ids,
        instance_types=[ng.instance_type],
        ami_type=ng.ami_type,
        capacity_type="ON_DEMAND",
        # Kubelet minor and AMI release pinned from the spec: a version bump upgrades these nodes, and a new AWS
        # AMI release reaches them only when the spec names it (EKS otherwise keeps the release it launched).
        version=ng.kubernetes_version or spec.kubernetes_version,
        release_version=spec.ami_release(ng.ami_family, ng.kubernetes_version, ng.ami_release),
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            min_size=ng.min_size, desired_size=ng.desired_size, max_size=ng.max_size
        ),
        update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
            id=cluster.system_launch_template.id,
            # Pinned to the version just written, so a template change rolls the group; under mocks the
            # output is absent and the first version stands in.
            version=cluster.system_launch_template.latest_version.apply(lambda v: str(int(v or 1))),
        ),
        labels={"gpucloud.io/node-class": "system"},
        tags=named_tags(tags, f"{cluster_name}-system"),
        opts=child(
            cluster,
            # ENIConfigs first: a node that joins before its zone's ENIConfig exists gets no pod IPs.
            depends_on=[*node_policies, *cluster.addons.values(), *cluster.eni_configs],
            # The cluster autoscaler or an operator owns the current size after creation.
            ignore_changes=["scalingConfig.desiredSize"],
        ),
    )
