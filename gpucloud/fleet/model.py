"""The typed pools a plan launches: what every reader (cost, policies, conformance, advice) reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpucloud.catalog import InstanceSpec

# Markets (purchase options), in the spelling EC2 uses for instanceMarketOptions and Karpenter for capacity type.
ON_DEMAND: Final = "on-demand"
SPOT: Final = "spot"
CAPACITY_BLOCK: Final = "capacity-block"
# Karpenter's "reserved" capacity type: On-Demand Capacity Reservations (and Capacity Blocks) it selects.
RESERVED: Final = "reserved"
MARKETS: Final = (ON_DEMAND, SPOT, CAPACITY_BLOCK, RESERVED)

# The launch paths, as a pool's ``path`` names them.
MANAGED: Final = "managed node group"
SELF_MANAGED: Final = "self-managed ASG"
INSTANCE: Final = "instance"
SPOT_REQUEST: Final = "spot request"
EC2_FLEET: Final = "EC2 Fleet"
SPOT_FLEET: Final = "Spot Fleet"
RESERVATION: Final = "capacity reservation"
KARPENTER: Final = "Karpenter NodePool"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str  # NoSchedule | NoExecute | PreferNoSchedule

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True)
class Accelerator:
    """One type's accelerators, from the catalog."""

    instance_type: str
    name: str  # the catalog's name ("A100-40GB")
    label: str  # Karpenter's label value, EC2's name ("a100")
    manufacturer: str
    kind: str  # "gpu" | "neuron"
    count: int
    memory_gib: float
    resource: str | None  # the extended resource a device plugin advertises ("nvidia.com/gpu")


@dataclass(frozen=True)
class Counts:
    """How many nodes: ``None`` where the plan does not say (unknown at preview, or Karpenter's desired)."""

    min: int | None = None
    desired: int | None = None
    max: int | None = None
    # Capacity units per instance type (ASG mixed-instances and fleet override weights); 1 when not weighted.
    weights: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MarketSplit:
    """How a pool divides its capacity between On-Demand and spot (ASG instances distribution, fleet targets)."""

    on_demand_base: int = 0
    on_demand_percentage: int = 100  # of the capacity above the base
    on_demand_target: int | None = None  # fleets: explicit On-Demand capacity
    spot_target: int | None = None  # EC2 Fleet: explicit spot capacity
    default_market: str | None = None  # EC2 Fleet defaultTargetCapacityType
    spot_allocation: str | None = None
    on_demand_allocation: str | None = None


@dataclass(frozen=True)
class BlockDevice:
    device_name: str | None
    size_gib: int | None
    volume_type: str | None
    iops: Any = None
    throughput: Any = None
    encrypted: bool | None = None  # None: not stated (the account's EBS default decides)
    kms_key_id: str | None = None
    kms_key_urns: tuple[str, ...] = ()  # in-plan KMS keys the mapping depends on
    delete_on_termination: bool | None = None
    snapshot_id: str | None = None
    root: bool = False  # an instance's or launch configuration's rootBlockDevice


@dataclass(frozen=True)
class Open:
    """Where a value one pool field needs could not be read: the resource that holds it (the pool's own, or
    the launch template or configuration it was read through), the exact input path, and why when it is not an
    unknown value (a launch template outside the program)."""

    source: str  # URN of the resource read
    path: str  # input path on that resource ("instanceTypes.0", "scalingConfig.maxSize", "instanceType")
    reason: str = ""


@dataclass
class Pool:
    """A set of nodes one resource starts, joined to what describes them (launch template or configuration,
    EC2NodeClass, subnets, capacity reservations, provider)."""

    urn: str
    name: str  # the resource's name in the program
    type: str  # its type token
    path: str  # the launch path (MANAGED, SELF_MANAGED, ...)
    instance_types: tuple[str, ...] = ()
    # The types written out (override instanceType, or the template's), in priority order; instance_types adds
    # what requirement sets admit.
    named_types: tuple[str, ...] = ()
    # Where the types are chosen (the input a finding about them points at).
    types_from: str = ""
    # The requirement sets that chose the types (NodePool requirements, attribute-based instanceRequirements).
    requirements: tuple[Mapping[str, Any], ...] = ()
    # True when the pool may also launch types outside ``instance_types`` (types outside the catalog).
    types_open: bool = False
    counts: Counts = field(default_factory=Counts)
    markets: tuple[str, ...] = ()
    split: MarketSplit | None = None
    region: str | None = None
    zones: frozenset[str] | None = None  # None: not known offline
    subnets: tuple[str, ...] = ()  # subnet URNs in the plan
    subnet_ids: int = 0  # how many subnet ids the resource passes (known or not)
    metadata_options: Mapping[str, Any] = field(default_factory=dict)
    block_devices: tuple[BlockDevice, ...] = ()
    public_ip: bool | None = None
    user_data: str | None = None  # decoded; None when absent or unknown
    user_data_known: bool = True
    ami_family: str = ""  # amiType / EC2NodeClass alias or amiFamily / "bottlerocket" from user data
    ami_release: str = ""  # releaseVersion / alias version / image id
    labels: dict[str, str] = field(default_factory=dict)  # keys normalised (labels.normalize)
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    update_strategy: Mapping[str, Any] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    # The label and tag maps that mark what the pool is for (gpucloud.io/pool, /workload, /interruptible), in
    # the order they win: node labels the resource sets, then its tags.
    marks: tuple[Mapping[str, Any], ...] = ()
    network_interfaces: tuple[Mapping[str, Any], ...] = ()
    launch_template: str | None = None  # URN of the joined launch template
    launch_template_problem: str | None = None  # why no in-plan template could be joined
    template_type: str | None = None  # the joined launch template's own instanceType
    launch_configuration: str | None = None
    node_class: str | None = None  # the EC2NodeClass's name
    capacity_reservations: tuple[str, ...] = ()  # in-plan ODCR URNs the nodes launch into
    warm_pool: Mapping[str, Any] | None = None
    limits: Mapping[str, Any] = field(default_factory=dict)  # Karpenter NodePool limits
    # Input paths whose values are unknown at preview, per field they leave open ("instance_types": path).
    unknown: dict[str, str] = field(default_factory=dict)
    # The same, one entry per value a reader may need on its own ("instance_types", "max_size", "desired",
    # "markets", "subnet_ids"), with the resource each was read from: a policy that needs only the maximum
    # size is not left undecided by an unknown desired size, and a finding names the template's field.
    open: dict[str, Open] = field(default_factory=dict)
    specs: dict[str, InstanceSpec] = field(default_factory=dict, repr=False)
    accelerators: tuple[Accelerator, ...] = ()

    @property
    def accelerated(self) -> bool:
        return bool(self.accelerators)

    @property
    def accelerators_per_node(self) -> int:
        return max((a.count for a in self.accelerators), default=0)

    @property
    def efa_interfaces(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(n for n in self.network_interfaces if n.get("interfaceType") in ("efa", "efa-only"))
