"""The managed backend of GpuNodePool: EKS managed node groups, one per capacity type."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi_aws as aws

from gpucloud.components.base import child, named_tags
from gpucloud.components.nodepools.capacity import (
    GroupPlan,
    managed_groups,
)
from gpucloud.components.nodepools.common import (
    _EKS_EFFECT,
    _capacity_label,
    _first_asg_name,
    _version,
    autoscaler_node_template_tags,
)
from gpucloud.components.nodepools.rollout import pace
from gpucloud.spec.pools import NodePoolSpec

if TYPE_CHECKING:
    from gpucloud.components.nodepools.pool import GpuNodePool


def build_managed(component: GpuNodePool) -> None:
    """One EKS managed node group per capacity type (ON_DEMAND / SPOT / CAPACITY_BLOCK), each with a launch template."""
    pool, cluster, config = component._config.pool, component._config.cluster, component._config
    release = None if component.ami.explicit_id else component.ami.release
    for group in managed_groups(pool):
        lt = component._launch_template(group.role, group=group, self_managed=False)
        capacity_block = group.capacity_type == "CAPACITY_BLOCK"
        labels = None if component.ami.needs_full_bootstrap else component.labels(_capacity_label(pool, group))
        taints = (
            None
            if component.ami.needs_full_bootstrap
            else [
                aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=_EKS_EFFECT[t.effect])
                for t in component.registered_taints
            ]
        )
        component.node_groups[group.role] = aws.eks.NodeGroup(
            f"{component._name}-{group.role}",
            cluster_name=cluster.name,
            node_role_arn=cluster.node_role_arn,
            subnet_ids=component.subnet_ids,
            capacity_type=group.capacity_type,
            instance_types=None if capacity_block else list(pool.instance_types),
            ami_type=component.ami.ami_type,
            # Pinned kubelet minor and AMI release: both change only with the spec (upgrade steps).
            version=None if component.ami.explicit_id else component.ami.kubernetes_version,
            release_version=release,
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=lt.id, version=lt.latest_version.apply(_version)),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=group.sizes.min, desired_size=group.sizes.desired, max_size=group.sizes.max
            ),
            update_config=_update_config(pool, group),
            labels=labels,
            taints=taints,
            node_repair_config=aws.eks.NodeGroupNodeRepairConfigArgs(enabled=config.enable_node_repair),
            tags=named_tags(config.tags, f"{component._name}-{group.role}"),
            # Cluster autoscalers own desiredSize after creation.
            opts=child(component, ignore_changes=["scalingConfig.desiredSize"]),
        )
        _group_template_tags(component, group, component.node_groups[group.role])


def _update_config(pool: NodePoolSpec, group: GroupPlan) -> aws.eks.NodeGroupUpdateConfigArgs:
    """The group's bounded pace (rollout.py): EKS takes a count or a percentage, never both.

    Capacity Blocks and targeted ODCRs hold no spare instance to surge into: MINIMAL (pulumi-aws 7.51) terminates
    a node before launching its replacement instead of failing to surge.
    """
    fixed = group.capacity_type == "CAPACITY_BLOCK" or group.targets_reservation
    p = pace(pool, group.sizes.max, fixed_capacity=fixed)
    return aws.eks.NodeGroupUpdateConfigArgs(
        max_unavailable=p.nodes,
        max_unavailable_percentage=p.percentage,
        update_strategy="MINIMAL" if fixed else None,
    )


def _group_template_tags(component: GpuNodePool, group: GroupPlan, node_group: aws.eks.NodeGroup) -> None:
    """Scale-from-zero hints EKS does not give cluster-autoscaler for a managed node group.

    EKS tags a managed group's ASG with the two auto-discovery keys itself, and CA (1.24+, the
    `eks:DescribeNodegroup` call in its AWS provider) reads the group's labels and taints from the EKS API
    when the group is at zero. Two things stay invisible: labels and taints that only the user data sets
    (custom AMIs, where the node group carries none), and extended resources CA cannot infer from the
    instance type (EFA). Those go on the group's ASG as tags (tags on the node group itself never reach it).
    """
    pool = component._config.pool
    tags = autoscaler_node_template_tags(
        component.labels(_capacity_label(pool, group)), component.taint, component.spec0, efa=pool.efa.enabled
    )
    wanted = {
        k: v
        for k, v in tags.items()
        if (component.ami.needs_full_bootstrap and "/resources/" not in k)
        or ("/resources/" in k and not k.endswith("/resources/nvidia.com/gpu"))
    }
    if not wanted:
        return
    asg_name = node_group.resources.apply(_first_asg_name)
    for i, (key, value) in enumerate(sorted(wanted.items())):
        component.managed_asg_tags.append(
            aws.autoscaling.Tag(
                f"{component._name}-{group.role}-ca-{i}",
                autoscaling_group_name=asg_name,
                tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                opts=child(component),
            )
        )


# --- component-managed -----------------------------------------------------------------------------------------
