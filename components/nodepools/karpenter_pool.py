"""The Karpenter backend of GpuNodePool: an EC2NodeClass and a NodePool on the cluster's Karpenter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi_kubernetes as k8s

from gpucloud.components.base import child, named_tags
from gpucloud.components.nodepools.ami import karpenter_alias
from gpucloud.components.nodepools.capacity import (
    capacity_types,
)
from gpucloud.components.nodepools.common import LABEL_PREFIX, ROOT_IOPS, ROOT_THROUGHPUT_MBPS, version_tags
from gpucloud.components.nodepools.network import karpenter_layout
from gpucloud.components.nodepools.rollout import karpenter_fixed_capacity, karpenter_grace, pace
from gpucloud.components.nodepools.userdata import Taint
from gpucloud.spec.pools import NodePoolSpec

if TYPE_CHECKING:
    from gpucloud.components.nodepools.pool import GpuNodePool


def build_karpenter(component: GpuNodePool) -> None:
    """An EC2NodeClass and a Karpenter NodePool, on the cluster's Karpenter."""
    pool, cluster, config = component._config.pool, component._config.cluster, component._config
    assert config.karpenter is not None
    opts = child(component, provider=cluster.k8s_provider, depends_on=[config.karpenter.release])
    reserved = pool.capacity.reserved
    ami_terms: Any
    if component.ami.explicit_id:
        ami_terms = [{"id": component.ami.explicit_id}]
    else:
        ami_terms = [{"alias": karpenter_alias(component.ami.family, component.ami.release)}]
    spec: dict[str, Any] = {
        "role": cluster.node_role_name,
        "amiSelectorTerms": ami_terms,
        "subnetSelectorTerms": [{"id": s} for s in component.subnet_ids],
        "securityGroupSelectorTerms": [{"id": cluster.node_security_group_id}]
        + ([{"id": cluster.efa_security_group_id}] if pool.efa.enabled else []),
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvdb" if component.ami.family == "bottlerocket" else "/dev/xvda",
                "ebs": {
                    "volumeSize": f"{pool.root_volume_gib}Gi",
                    "volumeType": "gp3",
                    "iops": ROOT_IOPS,
                    "throughput": ROOT_THROUGHPUT_MBPS,
                    "encrypted": True,
                    "kmsKeyID": cluster.kms_key_arn,
                    "deleteOnTermination": True,
                },
            }
        ],
        "associatePublicIPAddress": False,
        "tags": named_tags(config.tags, f"{component._name}-node"),
    }
    if component.ami.explicit_id:
        spec["amiFamily"] = "Bottlerocket" if component.ami.family == "bottlerocket" else "AL2023"
    if component.raid0:
        spec["instanceStorePolicy"] = "RAID0"
    if reserved is not None:
        ids: list[Any] = (
            [component.capacity_reservation.id]
            if component.capacity_reservation is not None
            else list(reserved.capacity_reservation_ids)
        )
        spec["capacityReservationSelectorTerms"] = [{"id": i} for i in ids]
    if component.placement_group is not None:
        spec["placementGroupSelector"] = {"name": component.placement_group.name}
    if pool.efa.enabled:
        interfaces = karpenter_layout(component.spec0)
        if interfaces:
            spec["networkInterfaces"] = interfaces
    component.node_class = k8s.apiextensions.CustomResource(
        f"{component._name}-nodeclass",
        api_version="karpenter.k8s.aws/v1",
        kind="EC2NodeClass",
        # Metadata only (no drift): the kubelet minor and release the pool pins, for the upgrade checks.
        metadata={
            "name": pool.name,
            "labels": {f"{LABEL_PREFIX}/pool": pool.name, **dict(version_tags(*_versions(component)))},
        },
        spec=spec,
        opts=opts,
    )
    component.karpenter_node_pool = k8s.apiextensions.CustomResource(
        f"{component._name}-nodepool",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={
            "name": pool.name,
            "labels": {f"{LABEL_PREFIX}/pool": pool.name},
            # Karpenter has no desired size; the cost engine reads the expected node count from here.
            "annotations": {f"{LABEL_PREFIX}/expected-nodes": str(pool.desired_size)},
        },
        spec=karpenter_node_pool_spec(
            pool, component.azs, component.labels(None), component.taint, startup_taint=component._config.startup_taint
        ),
        opts=child(
            component, provider=cluster.k8s_provider, depends_on=[config.karpenter.release, component.node_class]
        ),
    )


def _versions(component: GpuNodePool) -> tuple[str, str, str | None]:
    return component.ami.kubernetes_version, component.ami.release, component.ami.explicit_id


def karpenter_budgets(pool: NodePoolSpec) -> list[dict[str, Any]]:
    """Disruption budgets that follow the pool's rollout pace (rollout.py); the most restrictive active one wins.

    Drift (an AMI release pinned in the spec, a changed node class) rolls nodes at the pace, and training pods'
    karpenter.sh/do-not-disrupt keeps a busy node until its job ends. A pool that may launch only into its
    reservation gets no drift replacement: Karpenter launches the replacement before draining the drifted node,
    and a full reservation has no instance for it; such nodes take the new AMI when they expire (expireAfter) or
    empty out. A freeze window stops every voluntary disruption while it is active.
    """
    k = pool.karpenter
    fixed = karpenter_fixed_capacity(pool)
    p = pace(pool, pool.max_size, fixed_capacity=fixed)
    nodes = f"{p.percentage}%" if p.percentage is not None else str(p.nodes)
    budgets: list[dict[str, Any]] = [{"nodes": k.disruption_budget_nodes or nodes}]
    budgets.append({"nodes": "0" if fixed else nodes, "reasons": ["Drifted"]})
    freeze = pool.rollout.freeze
    if freeze is not None:
        budgets.append({"nodes": "0", "schedule": freeze.schedule, "duration": freeze.duration})
    return budgets


def karpenter_node_pool_spec(
    pool: NodePoolSpec, azs: list[str], labels: dict[str, str], taint: Taint, startup_taint: Taint | None = None
) -> dict[str, Any]:
    """NodePool spec: capacity types from the mix, GPU limit from maxSize, disruption tuned per workload."""
    k = pool.karpenter
    training = pool.workload in ("training", "hpc")
    policy = k.consolidation_policy or ("WhenEmpty" if training else "WhenEmptyOrUnderutilized")
    spec0 = pool.specs[0]
    resource = "nvidia.com/gpu" if spec0.is_gpu else "aws.amazon.com/neuron"
    budgets = karpenter_budgets(pool)
    return {
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity_types(pool)},
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(pool.instance_types)},
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(azs)},
                ],
                "taints": [{"key": taint.key, "value": taint.value, "effect": taint.effect}],
                # Karpenter expects startup taints to be removed by a DaemonSet and does not count them against
                # scheduling (karpenter.sh/v1 NodePool spec.template.spec.startupTaints).
                **(
                    {
                        "startupTaints": [
                            {"key": startup_taint.key, "value": startup_taint.value, "effect": startup_taint.effect}
                        ]
                    }
                    if startup_taint is not None
                    else {}
                ),
                "expireAfter": k.expire_after,
                "terminationGracePeriod": karpenter_grace(pool),
            },
        },
        # Every type in a pool has the same accelerator count, so this caps the pool at exactly maxSize nodes.
        "limits": {resource: str(pool.max_size * spec0.accelerator_count)},
        "disruption": {"consolidationPolicy": policy, "consolidateAfter": k.consolidate_after, "budgets": budgets},
    }
