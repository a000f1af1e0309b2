"""Composes one environment's platform from its validated spec. The root program and tests call build().

Each area has its own builder so the composition reads top to bottom: network and cluster, GPU node pools,
storage, Kubernetes add-ons, cost controls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpucloud.charts.images import pin_ref
from gpucloud.components.addons import GpuAddons, GpuAddonsConfig
from gpucloud.components.addons.kueue import Kueue, KueueConfig
from gpucloud.components.addons.lb_controller import LoadBalancerController, LoadBalancerControllerConfig
from gpucloud.components.addons.node_health import HEALTH_TAINT, NodeHealth, NodeHealthConfig
from gpucloud.components.base import child
from gpucloud.components.budget import GpuBudget, GpuBudgetConfig
from gpucloud.components.cluster import GpuCluster, GpuClusterConfig
from gpucloud.components.cost_reporting import GpuCostReporting, GpuCostReportingConfig
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.interruption import Consumer, GpuInterruptionQueue, GpuInterruptionQueueConfig
from gpucloud.components.karpenter import GpuKarpenter, GpuKarpenterConfig
from gpucloud.components.network import GpuNetwork, GpuNetworkConfig
from gpucloud.components.nodepools import GpuNodePool, GpuNodePoolConfig
from gpucloud.components.nodepools.rollout import nth_node_grace_seconds
from gpucloud.components.storage import GpuStorage, GpuStorageConfig
from gpucloud.components.termination_handler import (
    NTH_NODE_GRACE_DEFAULT,
    GpuNodeTerminationHandler,
    GpuNodeTerminationHandlerConfig,
)
from gpucloud.components.workloads import DRAIN_GRACE_EXPORT, DcgmDiag, DcgmDiagConfig, NcclTest, NcclTestConfig
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
            controller_services=list(spec.controller_endpoint_services()),
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
            # The add-ons keep prod's volumes (reclaimPolicy Retain, protect_data below), encrypted with this key.
            retain_key=spec.environment == "prod",
        ),
        vpc_id=network.vpc_id,
        vpc_cidr=network.vpc_cidr,
        subnet_ids_by_az=network.private_subnet_ids_by_az,
        efa_security_group_id=network.efa_security_group_id,
        pod_subnet_ids_by_az=network.pod_subnet_ids_by_az,
        pod_cidr=network.pod_cidr,
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
            # The system managed node group runs on the shared node role, and EKS creates the EC2_LINUX access
            # entry for a managed group's role itself; a second one for self-managed pools would fail at `up`.
            "node_access_entry": "exists",
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
    reporting = spec.budget.cost_reporting
    if reporting.enabled:
        billing = GpuCostReporting(
            f"{spec.name}-billing",
            GpuCostReportingConfig(
                region=spec.region,
                tags=spec.all_tags,
                name_prefix=spec.name,
                reporting=reporting,
                tag_keys=sorted(spec.all_tags),
                protect=spec.environment == "prod",
            ),
        )
        platform.components["cost_reporting"] = billing
        platform.exports["billingExportBucket"] = billing.bucket_name


def _build_node_pools(spec: PlatformSpec, platform: Platform) -> None:
    """One GpuNodePool per spec pool, plus the interruption queue, Karpenter and NTH when pools need them.

    Each interruption consumer gets its own queue (see components/interruption.py): Karpenter for karpenter
    pools, aws-node-termination-handler for managed/self-managed pools with spot or reserved capacity.
    """
    cluster = platform.cluster
    assert cluster is not None
    tags, region = spec.all_tags, spec.region
    pools = spec.node_pools
    consumers: list[Consumer] = []
    if any(p.backend == "karpenter" for p in pools):
        consumers.append("karpenter")
    nth_pools = {p.name for p in pools if p.backend != "karpenter" and p.needs_interruption_handling}
    if nth_pools:
        consumers.append("node-termination-handler")
    queue = None
    if consumers:
        queue = GpuInterruptionQueue(
            f"{spec.name}-interruption",
            GpuInterruptionQueueConfig(
                region=region,
                tags=tags,
                consumers=consumers,
                enable_asg_lifecycle_events=any(p.backend == "self-managed" for p in pools if p.name in nth_pools),
                enable_reservation_relay=any(p.capacity.reserved is not None for p in pools if p.name in nth_pools),
            ),
        )
        platform.components["interruption"] = queue
        platform.exports["interruptionQueueName"] = queue.queue_name
        platform.exports["interruptionQueueArn"] = queue.queue_arn
        platform.exports["interruptionQueues"] = {c: q.name for c, q in queue.queues.items()}
    # One EC2_LINUX access entry per node role: a managed node group on the role makes EKS create it (the
    # cluster code says so through extra["node_access_entry"]), else Karpenter or the first self-managed pool.
    access_entry_owned = cluster.extra.get("node_access_entry") == "exists"
    karpenter = None
    if queue is not None and "karpenter" in consumers:
        kq = queue.queues["karpenter"]
        karpenter = GpuKarpenter(
            f"{spec.name}-karpenter",
            GpuKarpenterConfig(
                region=region,
                tags=tags,
                cluster=cluster,
                interruption_queue_name=kq.name,
                interruption_queue_arn=kq.arn,
                create_access_entry=not access_entry_owned,
                enable_node_repair=spec.addons.node_health.enabled and spec.addons.node_health.replace_failed,
            ),
        )
        access_entry_owned = True
        platform.components["karpenter"] = karpenter
    if queue is not None and "node-termination-handler" in consumers:
        nq = queue.queues["node-termination-handler"]
        platform.components["node-termination-handler"] = GpuNodeTerminationHandler(
            f"{spec.name}-nth",
            GpuNodeTerminationHandlerConfig(
                region=region,
                tags=tags,
                cluster=cluster,
                queue_url=nq.url,
                queue_arn=nq.arn,
                node_termination_grace_period=nth_node_grace_seconds(list(pools), NTH_NODE_GRACE_DEFAULT),
            ),
        )
    exported: dict[str, Any] = {}
    health_taint = HEALTH_TAINT if spec.addons.node_health.enabled else None
    for pool in pools:
        owns_entry = pool.backend == "self-managed" and not access_entry_owned
        access_entry_owned = access_entry_owned or owns_entry
        component = GpuNodePool(
            f"{spec.name}-{pool.name}",
            GpuNodePoolConfig(
                region=region,
                tags=tags,
                environment=spec.environment,
                # GPU sharing (time-slicing, MIG) chosen in the addons section selects nodes by label.
                pool=pool.model_copy(
                    update={
                        "labels": {**spec.addons.node_labels_for(pool.name), **pool.labels},
                        # The cluster's amiReleases pin reaches every pool on the cluster's minor.
                        "ami": pool.ami
                        if pool.ami.id is not None
                        else pool.ami.model_copy(
                            update={
                                "release": spec.cluster.ami_release(
                                    pool.ami.family, pool.kubernetes_version, pool.ami.release
                                )
                            }
                        ),
                    }
                ),
                cluster=cluster,
                interruption_queue=queue if pool.name in nth_pools else None,
                karpenter=karpenter if pool.backend == "karpenter" else None,
                create_access_entry=owns_entry,
                startup_taint=health_taint if pool.specs[0].is_gpu and pool.specs[0].manufacturer == "nvidia" else None,
                enable_node_repair=not spec.addons.node_health.enabled or spec.addons.node_health.replace_failed,
            ),
        )
        platform.components[f"pool:{pool.name}"] = component
        exported[pool.name] = {
            "backend": pool.backend,
            "nodeGroups": component.node_group_names,
            "autoscalingGroup": component.autoscaling_group_name,
            "karpenterNodePool": component.karpenter_node_pool_name,
            "placementGroup": component.placement_group_name,
        }
    platform.exports["nodePools"] = exported


def _build_storage(spec: PlatformSpec, platform: Platform) -> None:
    assert platform.cluster is not None and spec.storage is not None
    storage = GpuStorage(
        f"{spec.name}-storage",
        GpuStorageConfig(
            region=spec.region,
            tags=spec.all_tags,
            name_prefix=spec.name,
            storage=spec.storage,
            fsx_availability_zone=spec.fsx_availability_zone if spec.storage.fsx_enabled else None,
            # Retained data is not enough in prod: protect also stops a replace from deleting it.
            protect=spec.environment == "prod",
        ),
        platform.cluster,
    )
    platform.components["storage"] = storage
    platform.exports.update(storage.exports())


def _build_addons(spec: PlatformSpec, platform: Platform) -> None:
    """Device plugins, observability and autoscaling, plus the acceptance jobs the spec switches on."""
    cluster = platform.cluster
    assert cluster is not None
    addons = GpuAddons(
        f"{spec.name}-addons",
        GpuAddonsConfig(
            region=spec.region,
            tags=spec.all_tags,
            addons=spec.addons,
            pools=spec.node_pools,
            alert_emails=list(spec.budget.alert_emails),
            protect_data=spec.environment == "prod",
        ),
        cluster,
    )
    platform.components["addons"] = addons
    platform.exports.update(
        {
            "gpuNamespace": addons.gpu_namespace,
            "monitoringNamespace": addons.monitoring_namespace,
            "nodeAutoscaler": addons.autoscaler,
            "prometheusServerUrl": addons.prometheus_server_url,
            "kedaTriggerAuthentication": addons.keda_trigger_authentication,
            "alertTopicArn": addons.alert_topic_arn,
        }
    )
    acceptance = spec.addons.acceptance
    if not (acceptance.enable_nccl_test or acceptance.enable_dcgm_diag):
        return
    namespace = f"{spec.addons.namespace_prefix}gpu-acceptance"
    ns = k8s.core.v1.Namespace(
        f"{spec.name}-acceptance-ns",
        metadata={"name": namespace},
        opts=child(addons, provider=cluster.k8s_provider),
    )
    for pool in spec.node_pools:
        instance_type = pool.instance_types[0]
        if not pool.specs[0].is_gpu:
            continue
        common = {
            "region": spec.region,
            "tags": spec.all_tags,
            "namespace": namespace,
            "pool": pool.name,
            "instance_type": instance_type,
            "availability_zones": pool.availability_zones,
            "karpenter": pool.backend == "karpenter",
            "use_efa": pool.efa.enabled,
            "termination_grace_period_seconds": pool.rollout.drain_grace_seconds,
        }
        # The MPIJob kind exists only once the MPI operator's CRD does.
        deps = [ns, *addons.releases.values(), *addons.mpi_operator.values()]
        if acceptance.enable_nccl_test and pool.efa.enabled:
            platform.components[f"nccl-{pool.name}"] = NcclTest(
                f"{spec.name}-{pool.name}-nccl",
                NcclTestConfig(
                    **common,
                    job_name=f"nccl-{pool.name}",
                    image=pin_ref(acceptance.nccl_test_image or ""),
                    mpi_api_version=acceptance.mpi_api_version,
                    min_bus_bandwidth_gbps=acceptance.min_bus_bandwidth_gbps,
                ),
                cluster.k8s_provider,
                opts=pulumi.ResourceOptions(depends_on=deps),
            )
        if acceptance.enable_dcgm_diag:
            platform.components[f"dcgm-{pool.name}"] = DcgmDiag(
                f"{spec.name}-{pool.name}-dcgm-diag",
                DcgmDiagConfig(
                    **common,
                    job_name=f"dcgm-diag-{pool.name}",
                    image=pin_ref(acceptance.dcgm_image),
                    nodes=max(1, pool.desired_size),
                ),
                cluster.k8s_provider,
                opts=pulumi.ResourceOptions(depends_on=deps),
            )


def _build_queueing(spec: PlatformSpec, platform: Platform) -> None:
    """Kueue with the pools' capacity flavours; team stacks read the cohort and flavour names from the exports."""
    assert platform.cluster is not None
    kueue = Kueue(
        f"{spec.name}-kueue",
        KueueConfig(region=spec.region, tags=spec.all_tags, addons=spec.addons, pools=spec.node_pools),
        platform.cluster,
    )
    platform.components["kueue"] = kueue
    platform.exports["kueueCohort"] = kueue.cohort
    platform.exports["kueueFlavours"] = kueue.flavours_by_pool


def build(spec: PlatformSpec) -> Platform:
    platform = Platform(spec=spec)
    platform.exports.update(
        {
            "platformName": spec.name,
            "environment": spec.environment,
            "region": spec.region,
            "availabilityZones": list(spec.availability_zones),
            # Team stacks give their training pods the drain grace of the pool they run on; a pool without a
            # checkpoint model is left out (the team's workload default applies).
            DRAIN_GRACE_EXPORT: {
                p.name: g for p in spec.node_pools if (g := p.rollout.drain_grace_seconds) is not None
            },
        }
    )
    _build_network_and_cluster(spec, platform)
    _build_node_pools(spec, platform)
    if spec.storage is not None:
        _build_storage(spec, platform)
    _build_addons(spec, platform)
    if spec.addons.kueue.enabled:
        _build_queueing(spec, platform)
    assert platform.cluster is not None
    if spec.addons.node_health.enabled:
        addons = platform.components["addons"]
        platform.components["node-health"] = NodeHealth(
            f"{spec.name}-node-health",
            NodeHealthConfig(
                region=spec.region,
                tags=spec.all_tags,
                addons=spec.addons,
                pools=spec.node_pools,
                # Only the in-cluster Prometheus answers unsigned queries; with AMP the XID alert rule still fires.
                prometheus_url=addons.prometheus_server_url
                if spec.addons.observability.metrics == "kube-prometheus-stack"
                else None,
            ),
            platform.cluster,
        )
    if spec.addons.load_balancer_controller.enabled:
        platform.components["lb-controller"] = LoadBalancerController(
            f"{spec.name}-lb-controller",
            LoadBalancerControllerConfig(region=spec.region, tags=spec.all_tags, addons=spec.addons),
            platform.cluster,
        )
    platform.exports["loadBalancerController"] = spec.addons.load_balancer_controller.enabled
    platform.exports["loadBalancerAllowInternetFacing"] = spec.addons.load_balancer_controller.allow_internet_facing
    _build_cost_controls(spec, platform)
    return platform
