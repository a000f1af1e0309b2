"""The self-managed backend of GpuNodePool: one Auto Scaling group with a mixed instances policy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from gpucloud.components.base import child, named_tags
from gpucloud.components.interruption import NTH_MANAGED_TAG
from gpucloud.components.nodepools.capacity import (
    plan_capacity,
    self_managed_sizes,
)
from gpucloud.components.nodepools.common import (
    CA_ENABLED_TAG,
    _capacity_label,
    _version,
    autoscaler_node_template_tags,
    ca_cluster_tag,
    version_tags,
)
from gpucloud.components.nodepools.rollout import checkpoint_percentages, hook_timeout_seconds, pace
from gpucloud.spec.pools import NodePoolSpec

if TYPE_CHECKING:
    from gpucloud.components.nodepools.pool import GpuNodePool


def build_self_managed(component: GpuNodePool) -> None:
    """One Auto Scaling group with a mixed instances policy, its instance profile and access entry."""
    pool, cluster, config = component._config.pool, component._config.cluster, component._config
    component.instance_profile = aws.iam.InstanceProfile(
        f"{component._name}-profile", role=cluster.node_role_name, tags=config.tags, opts=child(component)
    )
    if config.create_access_entry:
        component.access_entry = aws.eks.AccessEntry(
            f"{component._name}-node-access",
            cluster_name=cluster.name,
            principal_arn=cluster.node_role_arn,
            type="EC2_LINUX",
            tags=config.tags,
            opts=child(component),
        )
    reserved = pool.capacity.reserved
    # One launch template for every capacity type, so reservations are targeted at the ASG level below.
    lt = component._launch_template("", group=None, self_managed=True)
    plan = plan_capacity(pool)
    c = pool.capacity
    tags = [
        aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
        for k, v in named_tags(config.tags, f"{component._name}-node").items()
    ]
    tags.append(
        aws.autoscaling.GroupTagArgs(
            key=pulumi.Output.from_input(cluster.name).apply(lambda n: f"kubernetes.io/cluster/{n}"),
            value="owned",
            propagate_at_launch=True,
        )
    )
    # Discovery and scale-from-zero hints for cluster-autoscaler; they describe the group, not its instances.
    tags += [
        aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=False)
        for k, v in autoscaler_node_template_tags(
            component.labels(_capacity_label(pool, None)), component.taint, component.spec0, efa=pool.efa.enabled
        ).items()
    ]
    tags += [
        aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=False)
        for k, v in version_tags(component.ami.kubernetes_version, component.ami.release, component.ami.explicit_id)
    ]
    tags += [
        aws.autoscaling.GroupTagArgs(key=CA_ENABLED_TAG, value="true", propagate_at_launch=False),
        aws.autoscaling.GroupTagArgs(
            key=pulumi.Output.from_input(cluster.name).apply(ca_cluster_tag),
            value="owned",
            propagate_at_launch=False,
        ),
    ]
    hooks = None
    if component.nth_managed:
        tags.append(aws.autoscaling.GroupTagArgs(key=NTH_MANAGED_TAG, value="true", propagate_at_launch=True))
        # NTH drains on the termination hook (scale-in, capacity rebalance) and then completes it.
        hooks = [
            aws.autoscaling.GroupInitialLifecycleHookArgs(
                name="gpucloud-drain",
                lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
                default_result="CONTINUE",
                # Long enough for NTH to evict pods that each get the checkpoint-sized grace (rollout.py).
                heartbeat_timeout=hook_timeout_seconds(pool),
            )
        ]
    reservation = None
    if reserved is not None:
        target = aws.autoscaling.GroupCapacityReservationSpecificationCapacityReservationTargetArgs(
            capacity_reservation_ids=[component.capacity_reservation.id]
            if component.capacity_reservation is not None
            else (list(reserved.capacity_reservation_ids) or None),
            capacity_reservation_resource_group_arns=[reserved.resource_group_arn]
            if reserved.resource_group_arn
            else None,
        )
        reservation = aws.autoscaling.GroupCapacityReservationSpecificationArgs(
            capacity_reservation_preference="capacity-reservations-only"
            if reserved.preference == "capacity-reservations-only"
            else "capacity-reservations-first",
            capacity_reservation_target=target,
        )
    sizes = self_managed_sizes(pool)
    component.autoscaling_group = aws.autoscaling.Group(
        f"{component._name}-asg",
        min_size=sizes.min,
        max_size=sizes.max,
        desired_capacity=sizes.desired,
        vpc_zone_identifiers=component.subnet_ids,
        capacity_rebalance=plan.max.spot > 0,
        mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
            instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                on_demand_allocation_strategy="prioritized",
                # Reserved nodes are on-demand nodes that land in the reservation, so they count in the base.
                on_demand_base_capacity=pool.reserved_count + c.on_demand_base,
                on_demand_percentage_above_base_capacity=c.on_demand_percentage_above_base,
                spot_allocation_strategy=c.spot_allocation_strategy,
            ),
            launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                    launch_template_id=lt.id, version=lt.latest_version.apply(_version)
                ),
                overrides=[
                    aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(instance_type=t)
                    for t in pool.instance_types
                ],
            ),
        ),
        capacity_reservation_specification=reservation,
        initial_lifecycle_hooks=hooks,
        health_check_type="EC2",
        instance_refresh=instance_refresh(pool),
        tags=tags,
        opts=child(component, ignore_changes=["desiredCapacity"]),
    )


def instance_refresh(pool: NodePoolSpec) -> aws.autoscaling.GroupInstanceRefreshArgs:
    """Roll the ASG when its launch template or mixed instances policy changes (the provider starts a refresh on
    either), at the pool's pace (rollout.py).

    Min/max healthy percentages are of the desired capacity (Amazon EC2 Auto Scaling API, RefreshPreferences and
    InstanceMaintenancePolicy: min 0-100, max 100-200, at most 100 apart; min 100 replaces one instance at a time).
    Reserved capacity cannot surge: max 100 and min 100 - pace terminates a node before its replacement launches.
    Elsewhere min 100 and max 100 + pace launch the replacement first. Skip matching leaves nodes that already run
    the new template alone, so a refresh retried after a failure does not replace them twice. With a checkpoint
    model the refresh pauses after each batch for one checkpoint interval plus the write, so the restarted job has
    saved new work before the next batch drains.
    """
    fixed = pool.capacity.reserved is not None
    step = pace(pool, pool.max_size, fixed_capacity=fixed).as_percentage(pool.max_size)
    checkpoint = pool.rollout.checkpoint
    return aws.autoscaling.GroupInstanceRefreshArgs(
        strategy="Rolling",
        preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
            min_healthy_percentage=100 - step if fixed else 100,
            max_healthy_percentage=100 if fixed else 100 + step,
            skip_matching=True,
            checkpoint_percentages=checkpoint_percentages(step) if checkpoint is not None else None,
            checkpoint_delay=str(checkpoint.interval_minutes * 60 + checkpoint.write_seconds)
            if checkpoint is not None
            else None,
        ),
    )


# --- karpenter --------------------------------------------------------------------------------------------
