"""How a pool's min/desired/max split across reserved, on-demand and spot capacity.

The order is fixed: reserved nodes first (up to the reservation's count), then the on-demand base, then the
nodes above the base split by `onDemandPercentageAboveBase`, rounding on-demand *up* as EC2 Auto Scaling does
(so a managed-node-group pool and a self-managed ASG with the same spec buy the same mix at every size).
Each of min, desired and max is split on its own; the split is monotone, so min <= desired <= max holds
for every part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpucloud.spec.pools import NodePoolSpec


@dataclass(frozen=True)
class Split:
    """One size (min, desired or max) split by capacity type."""

    reserved: int
    on_demand: int
    spot: int

    @property
    def total(self) -> int:
        return self.reserved + self.on_demand + self.spot


def split_size(total: int, reserved: int, base: int, on_demand_percentage: int) -> Split:
    """Split `total` nodes: `reserved` first, then `base` on-demand, then the percentage above base."""
    r = min(reserved, total)
    rest = total - r
    b = min(base, rest)
    above = rest - b
    od_above = math.ceil(above * on_demand_percentage / 100)
    return Split(reserved=r, on_demand=b + od_above, spot=above - od_above)


@dataclass(frozen=True)
class Sizes:
    min: int
    desired: int
    max: int


@dataclass(frozen=True)
class CapacityPlan:
    """The three sizes of a pool, each split by capacity type."""

    min: Split
    desired: Split
    max: Split

    def part(self, kind: str) -> Sizes:
        return Sizes(getattr(self.min, kind), getattr(self.desired, kind), getattr(self.max, kind))


def plan_capacity(pool: NodePoolSpec) -> CapacityPlan:
    c = pool.capacity

    def one(n: int) -> Split:
        return split_size(n, pool.reserved_count, c.on_demand_base, c.on_demand_percentage_above_base)

    return CapacityPlan(min=one(pool.min_size), desired=one(pool.desired_size), max=one(pool.max_size))


@dataclass(frozen=True)
class GroupPlan:
    """One managed node group: its role in the pool, EKS capacity type, sizes and whether it targets the
    reservation."""

    role: str  # "capacity-block" | "reserved" | "on-demand" | "spot"
    capacity_type: str  # ON_DEMAND | SPOT | CAPACITY_BLOCK
    sizes: Sizes
    targets_reservation: bool


def managed_groups(pool: NodePoolSpec) -> list[GroupPlan]:
    """One managed node group per capacity type actually used.

    A Capacity Block gets its own CAPACITY_BLOCK group. A targeted ODCR whose preference is 'open' rides on
    the ON_DEMAND group's launch template (instances beyond the reservation fall back to on-demand); with
    'capacity-reservations-only' the reserved nodes get their own ON_DEMAND group, because instances beyond
    the reservation would fail to launch from that launch template.
    """
    plan = plan_capacity(pool)
    reserved = pool.capacity.reserved
    groups: list[GroupPlan] = []
    od = plan.part("on_demand")
    rs = plan.part("reserved")
    if reserved is not None and reserved.kind == "capacity-block":
        groups.append(GroupPlan("capacity-block", "CAPACITY_BLOCK", rs, True))
    elif reserved is not None and (reserved.preference == "capacity-reservations-only" or od.max == 0):
        groups.append(GroupPlan("reserved", "ON_DEMAND", rs, True))
    elif reserved is not None:
        od = Sizes(od.min + rs.min, od.desired + rs.desired, od.max + rs.max)
        groups.append(GroupPlan("on-demand", "ON_DEMAND", od, True))
        od = Sizes(0, 0, 0)
    if od.max > 0:
        groups.append(GroupPlan("on-demand", "ON_DEMAND", od, False))
    groups = [_with_on_demand_floor(g, pool) if g.role == "on-demand" else g for g in groups]
    sp = plan.part("spot")
    if sp.max > 0:
        groups.append(GroupPlan("spot", "SPOT", sp, False))
    return groups


def on_demand_floor(pool: NodePoolSpec) -> int:
    """Nodes the on-demand base keeps running whatever the pool's minSize says (capped by what fits).

    `onDemandBase` is the capacity bought on-demand before anything else. Split per size, a pool with
    minSize 0 gets an on-demand group with min 0, so the base was neither kept nor preferred: cluster-autoscaler
    scaled it away like any other node. The base is therefore a floor of the on-demand group (and of a
    self-managed ASG, whose mixed-instances policy then buys those nodes on-demand).
    """
    return min(pool.capacity.on_demand_base, pool.max_size - pool.reserved_count)


def _with_on_demand_floor(group: GroupPlan, pool: NodePoolSpec) -> GroupPlan:
    floor = min(on_demand_floor(pool), group.sizes.max)
    low = max(group.sizes.min, floor)
    sizes = Sizes(low, max(group.sizes.desired, low), group.sizes.max)
    return GroupPlan(group.role, group.capacity_type, sizes, group.targets_reservation)


def self_managed_sizes(pool: NodePoolSpec) -> Sizes:
    """The self-managed ASG's min/desired/max: the pool's, with the on-demand base as a floor."""
    low = max(pool.min_size, on_demand_floor(pool))
    return Sizes(low, max(pool.desired_size, low), pool.max_size)


# cluster-autoscaler's priority expander picks, among the groups that can fit a pending pod, the one whose
# name matches the highest priority (kubernetes/autoscaler cluster-autoscaler/expander/priority/readme.md).
# Managed node group ASGs are named eks-<node group name>-<uuid>, and the node group name ends in its role.
# Order, highest first: reserved capacity (ODCR, Capacity Block) is paid for whether used or not; then the
# on-demand group, whose max is the on-demand share of the pool (base plus onDemandPercentageAboveBase of the
# rest), so filling it first never buys more on-demand than the mix allows and leaves spot for the remainder,
# as the ASG's own InstancesDistribution does; then spot; then anything else (mixed self-managed ASGs, which
# apply the mix themselves, and the system node group).
ON_DEMAND_GROUP_REGEX = ".*-on-demand.*"


def expander_priorities(reserved_regex: str, spot_regex: str) -> dict[int, list[str]]:
    return {40: [reserved_regex], 30: [ON_DEMAND_GROUP_REGEX], 20: [spot_regex], 10: [".*"]}


def capacity_types(pool: NodePoolSpec) -> list[str]:
    """Karpenter `karpenter.sh/capacity-type` values the pool may use, in preference order."""
    plan = plan_capacity(pool)
    kinds = []
    if plan.max.reserved:
        kinds.append("reserved")
    if plan.max.spot:
        kinds.append("spot")
    if plan.max.on_demand:
        kinds.append("on-demand")
    return kinds
