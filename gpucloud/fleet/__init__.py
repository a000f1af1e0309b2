"""The fleet layer: a plan's resources as typed pools, the one model cost, the policy pack, conformance and
the advisor read. Pure: no Pulumi import and no I/O beyond the catalog's packaged data.

``pools(resources)`` joins every launch path (EC2 instances, spot requests, launch templates and
configurations, Auto Scaling groups with mixed instances, attribute-based requirements and warm pools, EKS node
groups, EC2 Fleet, Spot Fleet, capacity reservations and Capacity Blocks, Karpenter NodePools with their
EC2NodeClass) into :class:`Pool` records. Type tokens live in ``gpucloud.fleet.types`` and well-known labels
in ``gpucloud.fleet.labels``, each defined once.
"""

from gpucloud.fleet.build import Fleet, pools
from gpucloud.fleet.joins import Record, plan_region, record
from gpucloud.fleet.model import (
    CAPACITY_BLOCK,
    ON_DEMAND,
    RESERVED,
    SPOT,
    Accelerator,
    BlockDevice,
    Counts,
    MarketSplit,
    Pool,
    Taint,
)
from gpucloud.fleet.paths import EKS_DEFAULT_INSTANCE_TYPE

__all__ = [
    "CAPACITY_BLOCK",
    "EKS_DEFAULT_INSTANCE_TYPE",
    "ON_DEMAND",
    "RESERVED",
    "SPOT",
    "Accelerator",
    "BlockDevice",
    "Counts",
    "Fleet",
    "MarketSplit",
    "Pool",
    "Record",
    "Taint",
    "plan_region",
    "pools",
    "record",
]
