"""GPU node pool section of the stack spec: shape, sizes, capacity mix (on-demand / reserved / spot), EFA."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from gpucloud import catalog
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.common import Name
from gpucloud.spec.kinds import WorkloadKind

Backend = Literal["managed", "self-managed", "karpenter"]
SpotAllocationStrategy = Literal[
    "price-capacity-optimized", "capacity-optimized", "capacity-optimized-prioritized", "lowest-price"
]
_CR_ID = re.compile(r"^cr-[0-9a-f]{8}([0-9a-f]{9})?$")
_AMI_ID = re.compile(r"^ami-[0-9a-f]{8}([0-9a-f]{9})?$")


class ReservedCapacitySpec(SpecModel):
    """Capacity the pool runs on before anything else: targeted On-Demand Capacity Reservations or a Capacity Block."""

    kind: Literal["odcr", "capacity-block"] = Field(
        description="'odcr' for On-Demand Capacity Reservations, 'capacity-block' for Capacity Blocks for ML."
    )
    count: int = Field(ge=1, description="Nodes that run on the reserved capacity (at most the pool's maxSize).")
    capacity_reservation_ids: list[str] = Field(
        default_factory=list,
        description="Existing reservation ids (cr-...) to target. A Capacity Block takes exactly one.",
    )
    resource_group_arn: str | None = Field(
        default=None,
        description="ARN of a resource group of ODCRs to target instead of listing ids (ODCR only).",
    )
    create: bool = Field(
        default=False,
        description="Create a targeted ODCR of `count` instances in the pool's AZ (ODCR only; billed while idle).",
    )
    preference: Literal["capacity-reservations-only", "open"] = Field(
        default="capacity-reservations-only",
        description="What nodes do when the reservation is full: fail ('capacity-reservations-only') or fall "
        "back to on-demand ('open'). ODCR only.",
    )

    @field_validator("capacity_reservation_ids")
    @classmethod
    def _ids_shape(cls, ids: list[str]) -> list[str]:
        bad = [i for i in ids if not _CR_ID.match(i)]
        if bad:
            raise ValueError(f"not capacity reservation ids: {bad}; ids look like cr-0123456789abcdef0")
        return ids

    @model_validator(mode="after")
    def _one_source(self) -> ReservedCapacitySpec:
        rules = RuleViolations()
        sources = sum([bool(self.capacity_reservation_ids), self.resource_group_arn is not None, self.create])
        if self.kind == "capacity-block":
            if len(self.capacity_reservation_ids) != 1:
                rules.add(
                    "capacityReservationIds",
                    "a Capacity Block pool targets exactly one purchased block: give its one cr- id",
                )
            if self.resource_group_arn is not None or self.create:
                rules.add("kind", "Capacity Blocks are bought up front outside the stack; drop resourceGroupArn/create")
            if self.preference != "capacity-reservations-only":
                rules.add("preference", "Capacity Block instances only run inside the block; use the default")
        elif sources != 1:
            rules.add(
                "",
                "an ODCR pool needs exactly one of capacityReservationIds, resourceGroupArn or create: true "
                f"(got {sources})",
            )
        rules.raise_if_any()
        return self


class CapacitySpec(SpecModel):
    """How the pool's nodes are bought. Reserved nodes come first, then the on-demand base, then the rest split."""

    on_demand_base: int = Field(
        default=0, ge=0, description="Nodes always bought on-demand, after reserved capacity (0 or more)."
    )
    on_demand_percentage_above_base: int = Field(
        default=100,
        ge=0,
        le=100,
        description="Share (0-100) of nodes above the base bought on-demand; the rest is spot. 100 = no spot.",
    )
    spot_allocation_strategy: SpotAllocationStrategy = Field(
        default="price-capacity-optimized",
        description="How spot capacity is chosen across instance types and AZs.",
    )
    reserved: ReservedCapacitySpec | None = Field(
        default=None, description="Reserved capacity (ODCR or Capacity Block) used before anything else."
    )

    @property
    def spot_percentage(self) -> int:
        return 100 - self.on_demand_percentage_above_base


class EfaSpec(SpecModel):
    """Elastic Fabric Adapter networking for multi-node training and HPC."""

    enabled: bool = Field(default=False, description="Attach one EFA interface per EFA-capable network card.")
    placement_group: bool = Field(
        default=True,
        description="Launch into a cluster placement group. Turn off next to a reservation or Capacity Block "
        "that was not created in the group (else InsufficientInstanceCapacity).",
    )


class AmiSpec(SpecModel):
    """Which GPU AMI the nodes boot."""

    family: Literal["al2023", "bottlerocket"] = Field(
        default="al2023", description="AMI family: EKS-optimized AL2023 (NVIDIA/Neuron) or Bottlerocket NVIDIA."
    )
    id: str | None = Field(default=None, description="Explicit AMI id (ami-...) instead of the SSM-published one.")
    release: str | None = Field(
        default=None,
        description="EKS AMI release the pool boots (al2023: e.g. 1.35.6-20260714). Unset: cluster.amiReleases of "
        "the family when the pool runs the cluster's minor, else the versions table's release for the pool's minor. "
        "Pinned, never the SSM 'recommended' one: a new AWS release rolls the pool only when the spec changes.",
    )

    @model_validator(mode="after")
    def _release_shape(self) -> AmiSpec:
        if self.release is not None:
            from gpucloud.spec.cluster import check_ami_release

            check_ami_release(self.family, self.release)
            if self.id is not None:
                raise ValueError("ami.release and ami.id exclude each other: an explicit AMI id has no EKS release")
        return self

    @field_validator("id")
    @classmethod
    def _ami_shape(cls, value: str | None) -> str | None:
        if value is not None and not _AMI_ID.match(value):
            raise ValueError(f"'{value}' is not an AMI id; ids look like ami-0123456789abcdef0")
        return value


class KarpenterPoolSpec(SpecModel):
    """Karpenter disruption settings for one pool; defaults depend on the workload kind."""

    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] | None = Field(
        default=None,
        description="When Karpenter may remove nodes. Default: WhenEmpty for training/hpc (never repack a "
        "running gang), WhenEmptyOrUnderutilized for inference/rendering.",
    )
    consolidate_after: str = Field(
        default="10m", pattern=r"^(\d+(s|m|h))+$", description="Idle time before an empty node is removed (e.g. 10m)."
    )
    expire_after: str = Field(
        default="720h",
        pattern=r"^((\d+(s|m|h))+|Never)$",
        description="Node lifetime before Karpenter replaces it (picks up new AMIs); 'Never' for static pools.",
    )
    termination_grace_period: str | None = Field(
        default=None,
        pattern=r"^(\d+(s|m|h))+$",
        description="Longest a draining node waits for pods (time to checkpoint) before it is terminated. Unset: "
        "one checkpoint interval plus the drain grace of rollout.checkpoint, else 2h.",
    )
    disruption_budget_nodes: str | None = Field(
        default=None,
        pattern=r"^(\d+|\d+%)$",
        description="Most nodes (count or percent) Karpenter may disrupt at once for voluntary reasons. Unset: "
        "the pool's rollout pace (rollout.maxUnavailable / maxUnavailablePercentage, else chosen per pool).",
    )


# Karpenter v1 NodePool `spec.disruption.budgets[].schedule` / `.duration` patterns (vendored CRD
# vendor/upstream/charts/karpenter-1.12.1/crds/karpenter.sh_nodepools.yaml): a cron line or macro, minutes/hours.
_CRON = r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"
_BUDGET_DURATION = r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$"


class CheckpointSpec(SpecModel):
    """How the pool's jobs checkpoint: sizes every drain (grace periods, hook timeouts, refresh pauses)."""

    interval_minutes: int = Field(ge=1, le=1440, description="Minutes of work between two regular checkpoints.")
    write_seconds: int = Field(
        ge=1,
        le=3600,
        description="Seconds one checkpoint takes to write (the emergency one a drained rank writes on SIGTERM).",
    )


class FreezeWindowSpec(SpecModel):
    """A recurring window in which Karpenter disrupts no node of the pool voluntarily (drift, consolidation)."""

    schedule: str = Field(pattern=_CRON, description="Cron line (UTC) the window starts at, e.g. '0 8 * * mon-fri'.")
    duration: str = Field(pattern=_BUDGET_DURATION, description="How long the window lasts (minutes/hours, e.g. 10h).")


class RolloutSpec(SpecModel):
    """How fast a spec change (AMI release, Kubernetes minor, launch template) rolls the pool's nodes.

    Unset, the pace is chosen per pool by capacity type and size (docs/upgrades.md, "GPU-safe rollouts").
    """

    max_unavailable: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="Most nodes replaced at once (1-100, the EKS updateConfig limit). Exclusive with "
        "maxUnavailablePercentage.",
    )
    max_unavailable_percentage: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="Most nodes replaced at once as a percentage of the pool (1-100). Exclusive with maxUnavailable.",
    )
    checkpoint: CheckpointSpec | None = Field(
        default=None,
        description="The jobs' checkpoint model. Set: drain grace periods are derived from it; unset: the defaults.",
    )
    freeze: FreezeWindowSpec | None = Field(
        default=None, description="Karpenter only: a recurring window with no voluntary disruption."
    )

    @model_validator(mode="after")
    def _one_pace(self) -> RolloutSpec:
        if self.max_unavailable is not None and self.max_unavailable_percentage is not None:
            rules = RuleViolations()
            rules.add(
                "maxUnavailablePercentage",
                "set either maxUnavailable (a node count) or maxUnavailablePercentage, not both (EKS takes one)",
            )
            rules.raise_if_any()
        return self

    @property
    def drain_grace_seconds(self) -> int | None:
        """Seconds a drained training pod gets between SIGTERM and SIGKILL: the checkpoint write plus the margin."""
        return None if self.checkpoint is None else self.checkpoint.write_seconds + DRAIN_MARGIN_SECONDS


# Between SIGTERM and the last byte of the emergency checkpoint: the preStop hook's signal to the ranks
# (components/workloads/training.py waits grace - 10 s) and the process exit after the write. A gpucloud choice.
DRAIN_MARGIN_SECONDS = 30


class NodePoolSpec(SpecModel):
    """One GPU node pool: what runs on it, which instance types, how many nodes, how they are bought."""

    name: Name
    workload: WorkloadKind = Field(description="Workload kind: training, inference, hpc or rendering.")
    instance_types: Annotated[list[str], Field(min_length=1, max_length=20)] = Field(
        description="EC2 instance types; all must have the same GPU shape (accelerator count and EFA layout)."
    )
    min_size: int = Field(ge=0, description="Fewest nodes (0 lets the pool scale to zero).")
    desired_size: int = Field(ge=0, description="Nodes at creation; autoscalers own it afterwards.")
    max_size: int = Field(ge=1, le=1000, description="Most nodes the pool may grow to.")
    backend: Backend = Field(
        default="managed",
        description="How nodes are provisioned: EKS managed node groups, a self-managed autoscaling group "
        "with a mixed instances policy, or Karpenter.",
    )
    capacity: CapacitySpec = Field(default_factory=CapacitySpec, description="On-demand / reserved / spot mix.")
    availability_zones: list[str] | None = Field(
        default=None,
        description="AZs for this pool (a subset of the platform's). Required, and exactly one, with EFA.",
    )
    efa: EfaSpec = Field(default_factory=EfaSpec, description="EFA (RDMA) networking.")
    ami: AmiSpec = Field(default_factory=AmiSpec, description="GPU AMI choice.")
    kubernetes_version: str | None = Field(
        default=None,
        description="Kubelet minor of the pool's nodes. Unset: the cluster's. During an upgrade a pool may stay up "
        "to three minors behind the control plane (never ahead) until its own step rolls it.",
    )
    root_volume_gib: int = Field(
        default=200, ge=50, le=16384, description="Encrypted gp3 root volume size; GPU images are large."
    )
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes node labels.")
    karpenter: KarpenterPoolSpec = Field(
        default_factory=KarpenterPoolSpec, description="Karpenter disruption settings (karpenter backend only)."
    )
    rollout: RolloutSpec = Field(
        default_factory=RolloutSpec, description="Rollout pace and the checkpoint model that sizes drains."
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _node_version(cls, value: object) -> object:
        from gpucloud.spec.cluster import check_kubernetes_minor

        return None if value is None else check_kubernetes_minor(value)

    @field_validator("instance_types")
    @classmethod
    def _known_types(cls, types: list[str]) -> list[str]:
        problems = []
        for t in types:
            try:
                catalog.validate_instance_type(t)
            except catalog.UnknownInstanceType as exc:
                problems.append(str(exc))
                continue
            if t not in catalog.get_catalog():
                problems.append(
                    f"'{t}' is a valid EC2 type but not a GPU/accelerator type in the gpucloud catalog; "
                    "GPU pools need catalog facts (accelerators, EFA, prices)"
                )
        if len(set(types)) != len(types):
            problems.append("instance types are listed more than once")
        if problems:
            raise ValueError("; ".join(problems))
        return types

    @property
    def specs(self) -> list[catalog.InstanceSpec]:
        cat = catalog.get_catalog()
        return [cat.get(t) for t in self.instance_types]

    @property
    def spot_nodes_possible(self) -> bool:
        above_base = self.max_size - self.capacity.on_demand_base - self.reserved_count
        return self.capacity.spot_percentage > 0 and above_base > 0

    @property
    def reserved_count(self) -> int:
        return self.capacity.reserved.count if self.capacity.reserved else 0

    @property
    def spot_candidates(self) -> list[str]:
        """Catalog types interchangeable with this pool's for spot: same accelerator model and count (catalog
        `same_gpu_shape`), same EFA interface count, sold as spot and not deprecated."""
        cat = catalog.get_catalog()
        efa_counts = {s.efa_interfaces for s in self.specs}
        found: list[str] = []
        for t in self.instance_types:
            for c in cat.same_gpu_shape(t):
                spec = cat.get(c)
                if c not in found and spec.spot and not spec.deprecated and spec.efa_interfaces in efa_counts:
                    found.append(c)
        return sorted(found)

    @property
    def needs_interruption_handling(self) -> bool:
        """Spot and reserved capacity get interruption events; Karpenter always consumes its queue."""
        return self.backend == "karpenter" or self.spot_nodes_possible or self.capacity.reserved is not None

    @model_validator(mode="after")
    def _rules(self) -> NodePoolSpec:
        rules = RuleViolations()
        if not self.min_size <= self.desired_size <= self.max_size:
            rules.add(
                "desiredSize",
                f"sizes must satisfy minSize <= desiredSize <= maxSize (got {self.min_size} <= "
                f"{self.desired_size} <= {self.max_size}); raise maxSize or lower minSize/desiredSize",
            )
        specs = self.specs
        if len({(s.accelerator_count, s.efa_interfaces) for s in specs}) > 1:
            shape = ", ".join(f"{s.instance_type}={s.accelerator_count} accel/{s.efa_interfaces} EFA" for s in specs)
            rules.add(
                "instanceTypes",
                f"all types in a pool need the same accelerator count and EFA interface count ({shape}); "
                "split them into separate pools",
            )
        if self.efa.enabled:
            no_efa = [s.instance_type for s in specs if not s.efa_supported]
            if no_efa:
                rules.add("efa.enabled", f"types without EFA: {no_efa}; pick EFA-capable types or disable EFA")
            if not self.availability_zones or len(self.availability_zones) != 1:
                rules.add(
                    "availabilityZones",
                    "EFA pools need exactly one explicit AZ (EFA traffic does not cross AZs; nothing is guessed)",
                )
        reserved = self.capacity.reserved
        if reserved is not None:
            if reserved.count > self.max_size:
                rules.add(
                    "capacity.reserved.count",
                    f"{reserved.count} reserved nodes exceed maxSize {self.max_size}; raise maxSize or lower count",
                )
            if reserved.kind == "capacity-block":
                no_cb = [s.instance_type for s in specs if not s.capacity_block]
                if no_cb:
                    rules.add(
                        "capacity.reserved.kind",
                        f"Capacity Blocks are not sold for {no_cb}; use p4d/p4de/p5/p5e/p5en/p6/trn1/trn2 types",
                    )
                if len(self.instance_types) != 1:
                    rules.add("instanceTypes", "a Capacity Block pool has exactly one instance type (the block's)")
            single_az = self.availability_zones is not None and len(self.availability_zones) == 1
            if (reserved.kind == "capacity-block" or reserved.create) and not single_az:
                rules.add(
                    "availabilityZones",
                    "reserved capacity lives in one AZ: give the reservation's AZ as the only entry",
                )
        if self.capacity.on_demand_base + self.reserved_count > self.max_size:
            rules.add(
                "capacity.onDemandBase",
                f"onDemandBase {self.capacity.on_demand_base} plus reserved {self.reserved_count} exceeds maxSize "
                f"{self.max_size}",
            )
        if self.spot_nodes_possible:
            no_spot = [s.instance_type for s in specs if not s.spot]
            if no_spot:
                rules.add(
                    "capacity.onDemandPercentageAboveBase",
                    f"{no_spot} cannot run as spot; set onDemandPercentageAboveBase to 100 or drop those types",
                )
        on_demand_nodes = self.max_size - self.reserved_count > 0 and (
            self.capacity.on_demand_base > 0 or self.capacity.on_demand_percentage_above_base > 0
        )
        if on_demand_nodes:
            no_od = [s.instance_type for s in specs if not s.on_demand]
            if no_od:
                rules.add(
                    "instanceTypes",
                    f"{no_od} have no on-demand offering (Capacity Blocks only); reserve them with "
                    "capacity.reserved.kind=capacity-block and size the pool to the block",
                )
        if self.ami.family == "bottlerocket" and any(not s.is_gpu for s in specs):
            rules.add("ami.family", "Bottlerocket has no Neuron variant; use al2023 for Trainium/Inferentia")
        if len({s.accelerator_kind for s in specs}) > 1:
            rules.add("instanceTypes", "GPU and Neuron types need different AMIs; split them into separate pools")
        non_nvidia = [s.instance_type for s in specs if s.is_gpu and s.manufacturer != "nvidia"]
        if non_nvidia and self.ami.id is None:
            rules.add(
                "ami.id",
                f"{non_nvidia} have no EKS-optimized GPU AMI (NVIDIA only); give the id of an AMI with their driver",
            )
        if self.spot_nodes_possible and len(self.instance_types) < min(3, len(self.spot_candidates)):
            missing = [c for c in self.spot_candidates if c not in self.instance_types]
            rules.add(
                "instanceTypes",
                f"a pool that allows spot needs at least {min(3, len(self.spot_candidates))} instance types of "
                f"the same GPU shape (spot placement scores and interruption rates are per type); add from "
                f"{missing}, or set capacity.onDemandPercentageAboveBase to 100",
            )
        if self.rollout.freeze is not None and self.backend != "karpenter":
            rules.add(
                "rollout.freeze",
                "a freeze window is a Karpenter disruption budget; managed and self-managed pools roll only on "
                "`pulumi up`, so drop it or use backend karpenter",
            )
        if reserved is not None and reserved.kind == "capacity-block" and self.backend == "self-managed":
            rules.add(
                "backend",
                "Capacity Blocks cannot sit in a mixed-instances autoscaling group; use backend managed or karpenter",
            )
        if (
            reserved is not None
            and reserved.kind == "odcr"
            and reserved.resource_group_arn
            and self.backend == "karpenter"
        ):
            rules.add(
                "capacity.reserved.resourceGroupArn",
                "Karpenter selects reservations by id or tags, not by resource group; list capacityReservationIds",
            )
        rules.raise_if_any()
        return self
