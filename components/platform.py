"""Composes one environment's platform from its validated spec. The root program and tests call build().

Each area has its own builder so the composition reads top to bottom: network and cluster, GPU node pools,
storage, Kubernetes add-ons, cost controls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons import GpuAddons, GpuAddonsConfig
from components.base import child
from components.budget import GpuBudget, GpuBudgetConfig
from components.interfaces import ClusterHandle
from components.workloads import DcgmDiag, DcgmDiagConfig, NcclTest, NcclTestConfig
from gpucloud.spec import PlatformSpec


@dataclass
class Platform:
    """What build() created; `exports` are the stack outputs team stacks read through StackReference."""

    spec: PlatformSpec
    cluster: ClusterHandle | None = None
    components: dict[str, Any] = field(default_factory=dict)
    exports: dict[str, Any] = field(default_factory=dict)


def _build_cost_controls(spec: PlatformSpec, platform: Platform) -> None:
    platform.components["budget"] = GpuBudget(
        f"{spec.name}-cost",
        GpuBudgetConfig(region=spec.region, tags=spec.all_tags, environment=spec.environment, budget=spec.budget),
    )


def _build_addons(spec: PlatformSpec, platform: Platform) -> None:
    """Device plugins, observability and autoscaling, plus the acceptance jobs the spec switches on."""
    cluster = platform.cluster
    if cluster is None:
        return
    addons = GpuAddons(
        f"{spec.name}-addons",
        GpuAddonsConfig(region=spec.region, tags=spec.all_tags, addons=spec.addons, pools=spec.node_pools),
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
        }
        deps = [ns, *addons.releases.values()]
        if acceptance.enable_nccl_test and pool.efa.enabled:
            platform.components[f"nccl-{pool.name}"] = NcclTest(
                f"{spec.name}-{pool.name}-nccl",
                NcclTestConfig(
                    **common,
                    job_name=f"nccl-{pool.name}",
                    image=acceptance.nccl_test_image or "",
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
                    image=acceptance.dcgm_image,
                    nodes=max(1, pool.desired_size),
                ),
                cluster.k8s_provider,
                opts=pulumi.ResourceOptions(depends_on=deps),
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
    if platform.cluster is not None:
        _build_addons(spec, platform)
    _build_cost_controls(spec, platform)
    return platform
