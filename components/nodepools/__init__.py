"""GPU node pools: the GpuNodePool component and the pure helpers behind it (capacity split, AMI choice,
user data rendering, EFA layout)."""

from gpucloud.components.nodepools.ami import AmiChoice, choose_ami, karpenter_alias
from gpucloud.components.nodepools.capacity import (
    CapacityPlan,
    GroupPlan,
    Sizes,
    Split,
    capacity_types,
    expander_priorities,
    managed_groups,
    on_demand_floor,
    plan_capacity,
    self_managed_sizes,
    split_size,
)
from gpucloud.components.nodepools.common import GPU_TAINT, LABEL_PREFIX
from gpucloud.components.nodepools.karpenter_pool import karpenter_node_pool_spec
from gpucloud.components.nodepools.network import efa_layout, karpenter_layout
from gpucloud.components.nodepools.pool import GpuNodePool, GpuNodePoolConfig
from gpucloud.components.nodepools.userdata import (
    ClusterInfo,
    NodeBootstrap,
    Taint,
    render,
    render_bottlerocket,
    render_nodeadm,
)

__all__ = [
    "GPU_TAINT",
    "LABEL_PREFIX",
    "AmiChoice",
    "CapacityPlan",
    "ClusterInfo",
    "GpuNodePool",
    "GpuNodePoolConfig",
    "GroupPlan",
    "NodeBootstrap",
    "Sizes",
    "Split",
    "Taint",
    "capacity_types",
    "choose_ami",
    "efa_layout",
    "expander_priorities",
    "karpenter_alias",
    "karpenter_layout",
    "karpenter_node_pool_spec",
    "managed_groups",
    "on_demand_floor",
    "plan_capacity",
    "render",
    "render_bottlerocket",
    "render_nodeadm",
    "self_managed_sizes",
    "split_size",
]
