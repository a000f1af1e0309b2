"""Composes one environment's platform from its validated spec. The root program and tests call build().

Each area has its own builder so the composition reads top to bottom: network and cluster, GPU node pools,
storage, Kubernetes add-ons, cost controls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.budget import GpuBudget, GpuBudgetConfig
from components.cluster import GpuCluster, GpuClusterConfig
from components.interfaces import ClusterHandle
from components.network import GpuNetwork, GpuNetworkConfig
from gpucloud.spec import PlatformSpec


@dataclass
class Platform:
    """What build() created; `exports` are the stack outputs team stacks read through StackReference."""

    spec: PlatformSpec
    cluster: ClusterHandle | None = None
    components: dict[str, Any] = field(default_factory=dict)
    exports: dict[str, Any] = field(default_factory=dict)


def _build_network_and_cluster(spec: PlatformSpec, platform: Platform) -> None:
    # The EKS cluster is named after the platform: subnet tags and the log group name need it before the
    # cluster exists.
    cluster_name = spec.name
    network = GpuNetwork(
        f"{spec.name}-net",
        GpuNetworkConfig(
            region=spec.region,
            tags=spec.all_tags,
            availability_zones=list(spec.availability_zones),
            cluster_name=cluster_name,
            network=spec.network,
        ),
    )
    cluster = GpuCluster(
        f"{spec.name}-eks",
        GpuClusterConfig(
            region=spec.region,
            tags=spec.all_tags,
            cluster_name=cluster_name,
            environment=spec.environment,
            cluster=spec.cluster,
        ),
        vpc_id=network.vpc_id,
        vpc_cidr=network.vpc_cidr,
        subnet_ids_by_az=network.private_subnet_ids_by_az,
        efa_security_group_id=network.efa_security_group_id,
    )
    platform.components["network"] = network
    platform.components["cluster"] = cluster
    platform.cluster = ClusterHandle(
        name=cluster.cluster_name,
        kubernetes_version=spec.cluster.kubernetes_version,
        endpoint=cluster.endpoint,
        certificate_authority=cluster.certificate_authority,
        vpc_id=network.vpc_id,
        vpc_cidr=network.vpc_cidr,
        subnet_ids_by_az=network.private_subnet_ids_by_az,
        node_security_group_id=cluster.node_security_group_id,
        cluster_security_group_id=cluster.cluster_security_group_id,
        efa_security_group_id=network.efa_security_group_id,
        node_role_arn=cluster.node_role_arn,
        node_role_name=cluster.node_role_name,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_provider_url=cluster.oidc_provider_url,
        kms_key_arn=cluster.kms_key_arn,
        k8s_provider=cluster.k8s_provider,
        extra={
            "node_instance_profile_name": cluster.node_instance_profile.name,
            "node_instance_profile_arn": cluster.node_instance_profile.arn,
        },
    )
    platform.exports.update(
        {
            "clusterName": cluster.cluster_name,
            "clusterEndpoint": cluster.endpoint,
            "clusterCertificateAuthority": cluster.certificate_authority,
            "kubeconfig": cluster.kubeconfig,
            "kubernetesVersion": spec.cluster.kubernetes_version,
            "oidcProviderArn": cluster.oidc_provider_arn,
            "oidcProviderUrl": cluster.oidc_provider_url,
            "nodeRoleArn": cluster.node_role_arn,
            "nodeRoleName": cluster.node_role_name,
            "nodeInstanceProfileName": cluster.node_instance_profile.name,
            "nodeSecurityGroupId": cluster.node_security_group_id,
            "clusterSecurityGroupId": cluster.cluster_security_group_id,
            "efaSecurityGroupId": network.efa_security_group_id,
            "vpcId": network.vpc_id,
            "vpcCidr": network.vpc_cidr,
            "privateSubnetIds": network.private_subnet_ids,
            "privateSubnetIdsByAz": network.private_subnet_ids_by_az,
            "kmsKeyArn": pulumi.Output.from_input(cluster.kms_key_arn),
        }
    )


def _build_cost_controls(spec: PlatformSpec, platform: Platform) -> None:
    platform.components["budget"] = GpuBudget(
        f"{spec.name}-cost",
        GpuBudgetConfig(region=spec.region, tags=spec.all_tags, environment=spec.environment, budget=spec.budget),
    )


def build(spec: PlatformSpec) -> Platform:
    platform = Platform(spec=spec)
    platform.exports.update(
        {
            "platformName": spec.name,
            "environment": spec.environment,
            "region": spec.region,
            "availabilityZones": list(spec.availability_zones),
        }
    )
    _build_network_and_cluster(spec, platform)
    _build_cost_controls(spec, platform)
    return platform
