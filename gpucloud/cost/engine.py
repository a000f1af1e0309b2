"""Prices the raw resources of any recorded plan (engine view: camelCase inputs, unknowns as the sentinel).

Every billable path ends in a priced item, an unpriced entry with its reason, or a usage-billed entry with its
unit; types AWS does not bill are listed in `FREE_TYPES` / `_FREE_PREFIXES`. Instance rates come from the
regional price book (gpucloud.prices.book) for the plan's region, never from another region.
Import-light on purpose (catalog + stdlib): the policy pack calls `price_resources` from a stack policy.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

from gpucloud.catalog import Catalog, get_catalog, is_valid_ec2_instance_type
from gpucloud.cost import billable, rates
from gpucloud.cost.options import COMPUTE_SAVINGS_PLAN_GAP, Commitment, PricingOptions
from gpucloud.prices.book import PriceBook, RegionalRates, get_price_book, load_snapshot
from gpucloud.prices.cache import region_prices

# The analyzer's unknown sentinel (gpucloud.plan.model.UNKNOWN), repeated to keep this module pulumi-free.
UNKNOWN: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

NODE_GROUP: Final = "aws:eks/nodeGroup:NodeGroup"
ASG: Final = "aws:autoscaling/group:Group"
INSTANCE: Final = "aws:ec2/instance:Instance"
SPOT_REQUEST: Final = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
CAPACITY_RESERVATION: Final = "aws:ec2/capacityReservation:CapacityReservation"
CAPACITY_BLOCK_RESERVATION: Final = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
LAUNCH_TEMPLATE: Final = "aws:ec2/launchTemplate:LaunchTemplate"
LAUNCH_CONFIGURATION: Final = "aws:ec2/launchConfiguration:LaunchConfiguration"
LUSTRE: Final = "aws:fsx/lustreFileSystem:LustreFileSystem"
EKS_CLUSTER: Final = "aws:eks/cluster:Cluster"
NAT_GATEWAY: Final = "aws:ec2/natGateway:NatGateway"
EIP: Final = "aws:ec2/eip:Eip"
VPC_ENDPOINT: Final = "aws:ec2/vpcEndpoint:VpcEndpoint"
KMS_KEY: Final = "aws:kms/key:Key"
EBS_VOLUME: Final = "aws:ebs/volume:Volume"
EKS_ADDON: Final = "aws:eks/addon:Addon"
KARPENTER_NODEPOOLS: Final = ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1beta1:NodePool")
DEFAULT_REGION: Final = "us-east-1"
# Karpenter has no desired size; gpucloud's NodePools state the pool's desiredSize here (spec.replicas wins).
EXPECTED_NODES_ANNOTATION: Final = "gpucloud.io/expected-nodes"
# Karpenter NodePool `limits` keys gpucloud resolves to instance counts (per-instance capacity from the catalog).
_GPU_RESOURCES: Final = ("nvidia.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neurondevice", "amd.com/gpu")
EC2_FLEET: Final = "aws:ec2/fleet:Fleet"
SPOT_FLEET: Final = "aws:ec2/spotFleetRequest:SpotFleetRequest"

# Billed by use (storage, requests, data, events), so a plan cannot price them: type -> what is billed.
USAGE_BILLED: Final[dict[str, str]] = {k: reason for k, (reason, _) in billable.USAGE_BILLED.items()}

# Types AWS does not bill for (configuration, identity, routing, Kubernetes objects): skipped silently.
_FREE_PREFIXES: Final = (
    "pulumi:",
    "kubernetes:",
    "random:",
    "tls:",
    "command:",
    "aws:iam/",
    "aws:ec2/securityGroup",
    "aws:ec2/defaultSecurityGroup",
    "aws:vpc/securityGroup",
    "aws:ec2/vpc:",
    "aws:ec2/subnet:",
    "aws:ec2/routeTable",
    "aws:ec2/route:",
    "aws:ec2/mainRouteTableAssociation",
    "aws:ec2/defaultRouteTable",
    "aws:ec2/internetGateway",
    "aws:ec2/egressOnlyInternetGateway",
    "aws:ec2/networkAcl",
    "aws:ec2/defaultNetworkAcl",
    "aws:ec2/vpcDhcpOptions",
    "aws:ec2/vpcEndpointRouteTableAssociation",
    "aws:ec2/launchTemplate:",
    "aws:ec2/launchConfiguration:",
    "aws:ec2/placementGroup:",
    "aws:ec2/tag:",
    "aws:ec2/eipAssociation",
    "aws:ec2/keyPair",
    "aws:ec2/networkInterface",
    "aws:eks/addon:",
    "aws:eks/accessEntry",
    "aws:eks/accessPolicyAssociation",
    "aws:eks/podIdentityAssociation",
    "aws:eks/identityProviderConfig",
    "aws:autoscaling/policy",
    "aws:autoscaling/lifecycleHook",
    "aws:autoscaling/schedule",
    "aws:autoscaling/notification",
    "aws:autoscaling/tag",
    "aws:autoscaling/attachment",
    "aws:s3/bucket",  # bucket sub-resources; the buckets themselves are in USAGE_BILLED
    "aws:kms/alias",
    "aws:kms/grant",
    "aws:cloudwatch/eventRule",
    "aws:cloudwatch/eventTarget",
    "aws:sqs/queuePolicy",
    "aws:budgets/",
    "aws:costexplorer/",  # Cost Anomaly Detection is free
    "aws:ssm/parameter",
    "aws:fsx/dataRepositoryAssociation",
    "aws:sns/topicPolicy",
    "aws:sns/topicSubscription",
    "aws:sns/topic:",
)


@dataclass(frozen=True, slots=True)
class InstanceRates:
    on_demand: float | None
    spot: float | None
    capacity_block: float | None
    # Why a market has no rate (keys as in gpucloud.prices.book.MARKETS).
    reasons: Mapping[str, str] = field(default_factory=dict)
    # The published 1-year rate (Standard RI, No Upfront) in the region, when the snapshot or a refresh has one.
    reserved_1y: float | None = None
    source: str | None = None
    as_of: str | None = None
    # (source, as_of) per market when it differs from the On-Demand figure's (a refreshed spot price).
    origins: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)

    def origin(self, market: str) -> tuple[str | None, str | None]:
        return self.origins.get(market, (self.source, self.as_of))


def _is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


@functools.lru_cache(maxsize=256)
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _get(inputs: Any, path: str, default: Any = None) -> Any:
    """The value at a dotted path of object keys (no path here indexes a list), or `default`."""
    value = inputs
    for part in _parts(path):
        # dict first: engine-view inputs are plain dicts, and ABC isinstance checks dominate a big plan's time.
        if not (type(value) is dict or isinstance(value, Mapping)) or part not in value:
            return default
        value = value[part]
    return value


def _count(value: Any) -> int | None:
    """A whole-number size from an engine-view value (floats), or None when unknown or not a number."""
    if isinstance(value, bool) or value is None or _is_unknown(value):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
        return round(value)
    return None


def _num(value: Any) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def _is_custom(resource: Mapping[str, Any]) -> bool:
    custom = resource.get("custom")
    if isinstance(custom, bool):
        return custom
    type_ = str(resource.get("type", ""))
    # Provider resources look like pkg:module/sub:Type; components like gpucloud:pools:GpuNodePool.
    return type_.startswith("pulumi:providers:") or "/" in type_.split(":")[1 if ":" in type_ else 0]


def _from_book(found: RegionalRates) -> InstanceRates:
    on_demand, spot = found.on_demand, found.spot
    published_1y = found.reserved_1y if found.reserved_1y is not None and not found.reserved_1y.estimated else None
    first = on_demand or spot or found.capacity_block
    return InstanceRates(
        on_demand.usd if on_demand else None,
        spot.usd if spot else None,
        found.capacity_block.usd if found.capacity_block else None,
        reasons=dict(found.reasons),
        reserved_1y=published_1y.usd if published_1y else None,
        source=first.source if first else None,
        as_of=first.as_of if first else None,
        origins={
            market: (fig.source, fig.as_of)
            for market, fig in (("spot", spot), ("capacity-block", found.capacity_block))
            if fig is not None
        },
    )


def _plan_region(resources: Sequence[Mapping[str, Any]]) -> str | None:
    """The region of the plan's default AWS provider (`pulumi:providers:aws` named default*), else of the only
    explicit AWS provider; None when the plan does not say."""
    regions: dict[str, str] = {}
    for r in resources:
        if r.get("type") == "pulumi:providers:aws":
            region = _get(r.get("inputs"), "region")
            if isinstance(region, str) and region and not _is_unknown(region):
                regions[str(r.get("name"))] = region
    for name, region in regions.items():
        if name.startswith("default"):
            return region
    distinct = set(regions.values())
    return distinct.pop() if len(distinct) == 1 else None


_QUANTITY_SUFFIX: Final = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "m": 10**-3,
}


def _quantity(value: Any) -> float | None:
    """A Kubernetes resource quantity ("8", "1000m", "512Gi") as a number, or None when it is not one."""
    if isinstance(value, bool) or value is None or _is_unknown(value):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) and value >= 0 else None
    text = str(value).strip()
    # No suffix ends another ("Gi" and "G" differ in their last letter), so the order they are tried in is free.
    for suffix in _QUANTITY_SUFFIX:
        if text.endswith(suffix):
            try:
                number = float(text[: -len(suffix)])
            except ValueError:
                return None
            return number * _QUANTITY_SUFFIX[suffix] if number >= 0 else None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number >= 0 and math.isfinite(number) else None


class _Pricer:
    def __init__(
        self,
        resources: Sequence[Mapping[str, Any]],
        options: PricingOptions,
        catalog: Catalog,
        book: PriceBook | None = None,
    ) -> None:
        self.resources = resources
        self.by_urn = {str(r.get("urn")): r for r in resources}
        self.options = options
        self.catalog = catalog
        self.book = book or (get_price_book() if catalog is get_catalog() else PriceBook(load_snapshot(), catalog))
        self.as_of = options.as_of or date.today()
        self.warnings: list[str] = []
        self.unbounded: list[dict[str, str]] = []
        region = options.region or _plan_region(resources)
        self.region: str = region or DEFAULT_REGION
        if region is None:
            self.warnings.append(
                f"the plan names no AWS region (aws:region config or an aws provider's region): priced at "
                f"{DEFAULT_REGION}, the AWS provider's fallback"
            )
        self.items: list[dict[str, Any]] = []
        self.unpriced: list[dict[str, Any]] = []
        # Nodes each in-plan capacity reservation still has room for: [at desired sizes, at max sizes].
        self.reservation_room: dict[str, list[int]] = {}
        self.commitment_room: list[list[int | None]] = [[c.count, c.count] for c in options.commitments]
        self._cpu_cache = region_prices(self.region)
        self._service = rates.region_rates(self.region)
        self._rates_memo: dict[str, InstanceRates | str] = {}

    # ---- bookkeeping -------------------------------------------------------------------------------------
    def skip(
        self,
        resource: Mapping[str, Any],
        reason: str,
        unit: str | None = None,
        capacity: Mapping[str, Any] | None = None,
    ) -> None:
        entry: dict[str, Any] = {"urn": str(resource.get("urn")), "reason": reason}
        if unit is not None:
            entry["unit"] = unit
        if capacity is not None:
            # The nodes that went unpriced, so the plan's mix advice can say why a pool gets none.
            entry.update(capacity)
        self.unpriced.append(entry)

    def service_rate(self, resource: Mapping[str, Any], item: str, what: str) -> rates.Rate | None:
        """The plan region's rate for a region-varying item, or None (listed as unpriced, with the reason)."""
        rate = self._service.get(item)
        if rate is None:
            self.skip(resource, rates.missing_reason(self.region, item, what), rates.unit_of(item))
        return rate

    def usage_rate(self, item: str) -> str:
        """A usage-billed item's rate for the plan's region, as text for an unpriced entry's reason."""
        rate = self._service.get(item)
        if rate is None:
            return f"no {self.region} rate in gpucloud's service rates"
        return f"${rate.usd:g}/{rate.unit} in {self.region}"

    def add(
        self,
        resource: Mapping[str, Any],
        *,
        pricing: str,
        quantity: float,
        max_quantity: float,
        unit_price: float,
        unit: str,
        instance_type: str | None = None,
        name: str | None = None,
        rate: rates.Rate | None = None,
        source: str | None = None,
        as_of: str | None = None,
        commitment: Commitment | None = None,
    ) -> None:
        factor = rates.HOURS_PER_MONTH if unit == "hour" else 1
        extra: dict[str, Any] = {}
        if commitment is not None:
            # What the reserved item stands for, as data: the mix advice prices today's split by its term.
            extra["commitment"] = {"kind": commitment.kind, "term": commitment.term, "match": commitment.match}
        self.items.append(
            {
                "urn": str(resource.get("urn")),
                "name": name or str(resource.get("name")),
                "type": str(resource.get("type")),
                "instance_type": instance_type,
                "pricing": pricing,
                "quantity": _num(quantity),
                "max_quantity": _num(max_quantity),
                "unit_price": round(unit_price, 6),
                "unit": unit,
                "monthly": round(quantity * unit_price * factor, 2),
                "monthly_ceiling": round(max_quantity * unit_price * factor, 2),
                "region": self.region,
                "rate_source": rate.source if rate is not None else source,
                "rate_as_of": rate.as_of if rate is not None else as_of,
                **extra,
            }
        )

    # ---- rates -------------------------------------------------------------------------------------------
    def instance_rates(self, instance_type: str) -> InstanceRates | str:
        """The rates for a type in the plan's region, or the reason there are none."""
        memo = self._rates_memo.get(instance_type)
        if memo is not None:
            return memo
        result: InstanceRates | str
        if instance_type in self.catalog:
            result = _from_book(self.book.rates(instance_type, self.region))
        elif instance_type in self._cpu_cache or rates.cpu_key(instance_type) in self._service:
            cached = self._cpu_cache.get(instance_type, {})
            listed = self._service.get(rates.cpu_key(instance_type))
            on_demand = cached.get("on_demand_usd", listed.usd if listed else None)
            refreshed = (str(cached.get("price_source")), str(cached.get("price_date")))
            # (source, as_of) of the rate table's On-Demand figure when the cache does not override it.
            table = None if "on_demand_usd" in cached or listed is None else (listed.source, listed.as_of)
            result = InstanceRates(
                on_demand,
                cached.get("spot_usd"),
                None,
                reasons={
                    "on_demand": f"no On-Demand price for {instance_type} in {self.region}",
                    "spot": f"no spot price for {instance_type} in {self.region}: CPU spot prices are not "
                    f"estimated; run `gpucloud prices refresh --region {self.region} --types {instance_type}`",
                    "capacity_block": f"{instance_type} is not offered through Capacity Blocks",
                },
                source=(table or refreshed)[0],
                as_of=(table or refreshed)[1],
                # A spot price only ever comes from the refresh, so it names the refresh even beside the table's
                # On-Demand rate.
                origins={"spot": refreshed},
            )
        elif not is_valid_ec2_instance_type(instance_type):
            result = f"{instance_type!r} is not an EC2 instance type"
        elif instance_type in rates.CPU_TYPES:
            result = rates.missing_reason(self.region, rates.cpu_key(instance_type), f"{instance_type} On-Demand")
        else:
            result = (
                f"{instance_type} is not in the gpucloud catalog or the cost rate table; "
                f"run `gpucloud prices refresh --region {self.region} --types {instance_type}` to price it"
            )
        self._rates_memo[instance_type] = result
        return result

    def _commitment_discount(self, commitment: Commitment, instance_type: str, found: InstanceRates) -> float:
        if commitment.discount is not None:
            return commitment.discount
        spec = self.catalog.find(instance_type)
        if spec is None:
            return 0.0
        fam = self.catalog.family_pricing(spec.family)
        discount = fam.reserved_1y if commitment.term == "1y" else fam.reserved_3y
        if commitment.term == "1y" and found.reserved_1y is not None and found.on_demand:
            # The region's published 1-year Standard RI (No Upfront) rate beats the family's planning figure.
            discount = 1 - found.reserved_1y / found.on_demand
        if commitment.kind == "compute-savings-plan":
            discount = max(0.0, discount - COMPUTE_SAVINGS_PLAN_GAP)
        return discount

    # ---- fleets ------------------------------------------------------------------------------------------
    def fleet(
        self,
        resource: Mapping[str, Any],
        instance_type: str,
        market: str,
        desired: int,
        maximum: int,
        reservations: Iterable[str] = (),
    ) -> None:
        """Price `desired`/`maximum` instances of one type bought on one market."""
        if desired == 0 and maximum == 0:
            return
        found = self.instance_rates(instance_type)
        unpriced = {"instance_type": instance_type, "market": market, "nodes": desired, "max_nodes": maximum}
        if isinstance(found, str):
            self.skip(resource, found, capacity=unpriced)
            return
        if market == "spot":
            if found.spot is None:
                self.skip(
                    resource,
                    found.reasons.get("spot", f"{instance_type} has no spot price in {self.region}"),
                    capacity=unpriced,
                )
                return
            self.add(
                resource,
                pricing="spot",
                quantity=desired,
                max_quantity=maximum,
                unit_price=found.spot,
                unit="hour",
                instance_type=instance_type,
                source=found.origin("spot")[0],
                as_of=found.origin("spot")[1],
            )
            return
        if market == "capacity-block":
            if found.capacity_block is None:
                self.skip(
                    resource,
                    found.reasons.get("capacity_block", f"no Capacity Block rate for {instance_type} in {self.region}"),
                    capacity=unpriced,
                )
                return
            # The block is prepaid at purchase; this is its rate spread over the month the nodes run.
            self.add(
                resource,
                pricing="capacity-block",
                quantity=desired,
                max_quantity=maximum,
                unit_price=found.capacity_block,
                unit="hour",
                instance_type=instance_type,
                source=found.origin("capacity-block")[0],
                as_of=found.origin("capacity-block")[1],
            )
            return
        # On-Demand: nodes inside an in-plan ODCR are billed through the reservation's own item.
        for urn in reservations:
            room = self.reservation_room.get(urn)
            if room is None:
                continue
            covered_desired, covered_max = min(room[0], desired), min(room[1], maximum)
            room[0] -= covered_desired
            room[1] -= covered_max
            desired -= covered_desired
            maximum -= covered_max
        self.on_demand(resource, instance_type, desired, maximum, found)

    def on_demand(
        self, resource: Mapping[str, Any], instance_type: str, desired: int, maximum: int, found: InstanceRates
    ) -> None:
        if desired == 0 and maximum == 0:
            return
        if found.on_demand is None:
            nodes = {"instance_type": instance_type, "market": "on-demand", "nodes": desired, "max_nodes": maximum}
            self.skip(
                resource,
                found.reasons.get("on_demand", f"{instance_type} has no On-Demand price in {self.region}"),
                capacity=nodes,
            )
            return
        for commitment, room in zip(self.options.commitments, self.commitment_room, strict=True):
            if not commitment.matches(instance_type) or (desired == 0 and maximum == 0):
                continue
            covered_desired = desired if room[0] is None else min(room[0], desired)
            covered_max = maximum if room[1] is None else min(room[1], maximum)
            if room[0] is not None:
                room[0] -= covered_desired
            if room[1] is not None:
                room[1] -= covered_max
            if covered_desired or covered_max:
                self.add(
                    resource,
                    pricing="reserved",
                    quantity=covered_desired,
                    max_quantity=covered_max,
                    unit_price=found.on_demand * (1 - self._commitment_discount(commitment, instance_type, found)),
                    unit="hour",
                    instance_type=instance_type,
                    source=(
                        "commitment discount given in gpucloud:pricing"
                        if commitment.discount is not None
                        else f"{found.source}+{commitment.term} {commitment.kind}"
                    ),
                    as_of=found.as_of,
                    commitment=commitment,
                )
            desired -= covered_desired
            maximum -= covered_max
        if desired or maximum:
            self.add(
                resource,
                pricing="on-demand",
                quantity=desired,
                max_quantity=maximum,
                unit_price=found.on_demand,
                unit="hour",
                instance_type=instance_type,
                source=found.source,
                as_of=found.as_of,
            )

    # ---- references between resources -------------------------------------------------------------------
    def referenced(self, resource: Mapping[str, Any], prop: str, type_: str) -> list[Mapping[str, Any]]:
        """Resources of `type_` that `prop` of `resource` depends on (ids are unknown at preview, URNs are not)."""
        prop_deps = resource.get("propertyDependencies") or resource.get("property_dependencies") or {}
        urns = list(prop_deps.get(prop) or []) if isinstance(prop_deps, Mapping) else []
        found = [self.by_urn[u] for u in urns if u in self.by_urn and self.by_urn[u].get("type") == type_]
        if found or prop_deps:
            return found
        deps = [self.by_urn[u] for u in resource.get("dependencies") or [] if u in self.by_urn]
        return [d for d in deps if d.get("type") == type_]

    def launch_template(
        self, resource: Mapping[str, Any], prop: str, spec: Any
    ) -> tuple[Mapping[str, Any] | None, str | None]:
        """The in-plan launch template `spec` ({id|name|launchTemplateId|launchTemplateName}) points at."""
        if not isinstance(spec, Mapping):
            return None, None
        candidates = self.referenced(resource, prop, LAUNCH_TEMPLATE)
        if len(candidates) == 1:
            return candidates[0], None
        name = spec.get("name", spec.get("launchTemplateName"))
        if isinstance(name, str) and not _is_unknown(name):
            for r in self.resources:
                if r.get("type") == LAUNCH_TEMPLATE and name in (_get(r.get("inputs"), "name"), r.get("name")):
                    return r, None
            return None, f"launch template {name!r} is not in this program, so its instance type is unknown"
        ident = spec.get("id", spec.get("launchTemplateId"))
        if isinstance(ident, str) and not _is_unknown(ident):
            return None, f"launch template {ident} is not in this program, so its instance type is unknown"
        if len(candidates) > 1:
            return None, "the launch template is ambiguous (several in its dependencies)"
        return None, "the launch template could not be matched to a resource in this program"

    def reservations_of(self, holder: Mapping[str, Any] | None, prop: str) -> list[str]:
        if holder is None:
            return []
        return [str(r.get("urn")) for r in self.referenced(holder, prop, CAPACITY_RESERVATION)]

    def root_volumes(
        self, resource: Mapping[str, Any], mappings: Any, desired: int, maximum: int, label: str = "root volumes"
    ) -> None:
        if not self.options.root_volumes or not isinstance(mappings, list) or (desired == 0 and maximum == 0):
            return
        for mapping in mappings:
            ebs = _get(mapping, "ebs")  # _get reads None for a mapping that is not an object
            size = _count(_get(ebs, "volumeSize"))
            if not size:
                continue  # the AMI's snapshot size applies: small, and unknown here
            vol = _get(ebs, "volumeType")
            vol = vol if isinstance(vol, str) and vol in rates.EBS_VOLUME_TYPES else rates.EBS_DEFAULT_TYPE
            self.volume(
                resource,
                vol,
                size,
                _get(ebs, "iops"),
                _get(ebs, "throughput"),
                desired,
                maximum,
                f"{resource.get('name')} {label}",
            )

    # ---- resource kinds ----------------------------------------------------------------------------------
    def price(self) -> None:
        for r in self.resources:
            if r.get("type") == CAPACITY_RESERVATION:
                count = _count(_get(r.get("inputs"), "instanceCount"))
                if count is not None:
                    self.reservation_room[str(r.get("urn"))] = [count, count]
        for r in self.resources:
            type_ = str(r.get("type", ""))
            if not _is_custom(r):
                continue
            handler = _HANDLERS.get(type_)
            if handler is not None:
                handler(self, r, r.get("inputs") or {})
            elif type_ in billable.USAGE_BILLED:
                reason, unit = billable.USAGE_BILLED[type_]
                self.skip(r, f"usage-billed: {reason}", unit)
            elif type_ in billable.BILLED_NOT_PRICED:
                reason, unit = billable.BILLED_NOT_PRICED[type_]
                self.skip(r, f"billed, no rate in gpucloud: {reason}", unit)
            elif type_ in billable.FREE_TYPES or type_.startswith(_FREE_PREFIXES):
                continue
            else:
                self.skip(r, f"no price rule for {type_}")

    def node_group(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        desired = _count(_get(inputs, "scalingConfig.desiredSize"))
        maximum = _count(_get(inputs, "scalingConfig.maxSize"))
        if desired is None or maximum is None:
            self.skip(r, "scalingConfig.desiredSize/maxSize are unknown at preview")
            return
        capacity = _get(inputs, "capacityType", "ON_DEMAND")
        markets = {"ON_DEMAND": "on-demand", "SPOT": "spot", "CAPACITY_BLOCK": "capacity-block"}
        if capacity not in markets:
            self.skip(r, f"capacityType {capacity!r} is unknown at preview or not ON_DEMAND/SPOT/CAPACITY_BLOCK")
            return
        lt_spec = _get(inputs, "launchTemplate")
        lt, lt_problem = self.launch_template(r, "launchTemplate", lt_spec)
        types = _get(inputs, "instanceTypes")
        instance_type: Any
        if isinstance(types, list) and types:
            # Managed node groups launch the first listed type first (prioritized On-Demand); spot spreads
            # over the list, which the first type's price approximates for a same-shape list.
            instance_type = types[0]
        elif _is_unknown(types):
            # A list computed at preview is an unknown type (reported below), never the EKS default.
            instance_type = types
        elif lt is not None:
            instance_type = _get(lt.get("inputs"), "instanceType")
        elif lt_spec is None:
            instance_type = rates.EKS_DEFAULT_INSTANCE_TYPE
        else:
            self.skip(r, f"instance type unknown: {lt_problem}")
            return
        if not isinstance(instance_type, str) or _is_unknown(instance_type):
            self.skip(r, "instance type is unknown at preview (instanceTypes / launch template instanceType)")
            return
        reservations = self.reservations_of(lt, "capacityReservationSpecification")
        self.fleet(r, instance_type, markets[capacity], desired, maximum, reservations)
        if lt is not None:
            self.root_volumes(r, _get(lt.get("inputs"), "blockDeviceMappings"), desired, maximum)

    def autoscaling_group(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        maximum = _count(_get(inputs, "maxSize"))
        desired_raw = _get(inputs, "desiredCapacity")
        desired = _count(desired_raw) if desired_raw is not None else _count(_get(inputs, "minSize"))
        if desired is None or maximum is None:
            self.skip(r, "desiredCapacity/minSize/maxSize are unknown at preview")
            return
        mip = _get(inputs, "mixedInstancesPolicy")
        if isinstance(mip, Mapping):
            self._mixed(r, mip, desired, maximum)
            return
        lt, problem = self.launch_template(r, "launchTemplate", _get(inputs, "launchTemplate"))
        if lt is None and problem is None:
            lcs = self.referenced(r, "launchConfiguration", LAUNCH_CONFIGURATION)
            if not lcs:
                self.skip(r, "no launch template or launch configuration found for the group")
                return
            lc_inputs = lcs[0].get("inputs") or {}
            itype = _get(lc_inputs, "instanceType")
            market = "spot" if _get(lc_inputs, "spotPrice") not in (None, "") else "on-demand"
            if not isinstance(itype, str) or _is_unknown(itype):
                self.skip(r, "the launch configuration's instanceType is unknown at preview")
                return
            self.fleet(r, itype, market, desired, maximum)
            return
        if lt is None:
            self.skip(r, f"instance type unknown: {problem}")
            return
        lt_inputs = lt.get("inputs") or {}
        itype = _get(lt_inputs, "instanceType")
        if not isinstance(itype, str) or _is_unknown(itype):
            self.skip(r, "the launch template's instanceType is unknown at preview")
            return
        market = {"spot": "spot", "capacity-block": "capacity-block"}.get(
            str(_get(lt_inputs, "instanceMarketOptions.marketType")), "on-demand"
        )
        self.fleet(r, itype, market, desired, maximum, self.reservations_of(lt, "capacityReservationSpecification"))
        self.root_volumes(r, _get(lt_inputs, "blockDeviceMappings"), desired, maximum)

    def _mixed(self, r: Mapping[str, Any], mip: Mapping[str, Any], desired: int, maximum: int) -> None:
        dist = _get(mip, "instancesDistribution") or {}
        base = _count(_get(dist, "onDemandBaseCapacity", 0))
        pct = _count(_get(dist, "onDemandPercentageAboveBaseCapacity", 100))
        if base is None or pct is None or pct > 100:
            self.skip(r, "instancesDistribution base/percentage are unknown at preview or out of range")
            return
        lt, problem = self.launch_template(
            r, "mixedInstancesPolicy", _get(mip, "launchTemplate.launchTemplateSpecification")
        )
        lt_inputs = (lt.get("inputs") or {}) if lt is not None else {}
        overrides = _get(mip, "launchTemplate.overrides") or []
        chosen: str | None = None
        weight = 1.0
        reason = problem or "no instance type in the overrides or the launch template"
        passed: list[str] = []
        if overrides:
            # The first override the catalog prices: On-Demand allocation is 'prioritized' by default, so the
            # first override is what the group launches first.
            for override in overrides:
                itype = _get(override, "instanceType")
                if not isinstance(itype, str) or _is_unknown(itype):
                    if _get(override, "instanceRequirements") is not None:
                        reason = "overrides use instanceRequirements (types are chosen at launch)"
                    continue
                found = self.instance_rates(itype)
                needs_spot_only = pct == 0 and base == 0
                if isinstance(found, InstanceRates) and (
                    found.on_demand is not None or (needs_spot_only and found.spot is not None)
                ):
                    chosen = itype
                    w = _get(override, "weightedCapacity")
                    weight = float(w) if isinstance(w, str | int | float) and not _is_unknown(w) else 1.0
                    break
                reason = found if isinstance(found, str) else f"no price for override {itype}"
                passed.append(itype)
        else:
            itype = _get(lt_inputs, "instanceType")
            if isinstance(itype, str) and not _is_unknown(itype):
                chosen = itype
        if chosen is None:
            self.skip(r, f"instance type unknown: {reason}")
            return
        if passed:
            self.warnings.append(
                f"{r.get('name')}: overrides {', '.join(passed)} have no usable price in {self.region}; "
                f"priced as {chosen}, the first override that has one"
            )

        def split(units: int) -> tuple[int, int]:
            od_base = min(base, units)
            # Auto Scaling rounds the On-Demand share above base up, in favour of On-Demand.
            od = od_base + math.ceil((units - od_base) * pct / 100)
            od_nodes = math.ceil(od / weight) if weight > 0 else od
            spot_nodes = math.ceil((units - od) / weight) if weight > 0 else units - od
            return od_nodes, spot_nodes

        od_desired, spot_desired = split(desired)
        od_max, spot_max = split(maximum)
        reservations = self.reservations_of(lt, "capacityReservationSpecification")
        self.fleet(r, chosen, "on-demand", od_desired, od_max, reservations)
        self.fleet(r, chosen, "spot", spot_desired, spot_max)
        if lt is not None:
            self.root_volumes(r, _get(lt_inputs, "blockDeviceMappings"), od_desired + spot_desired, od_max + spot_max)

    def instance(self, r: Mapping[str, Any], inputs: Mapping[str, Any], spot: bool = False) -> None:
        itype = _get(inputs, "instanceType")
        lt, problem = self.launch_template(r, "launchTemplate", _get(inputs, "launchTemplate"))
        lt_inputs = (lt.get("inputs") or {}) if lt is not None else {}
        if itype is None:
            itype = _get(lt_inputs, "instanceType")
        if not isinstance(itype, str) or _is_unknown(itype):
            self.skip(r, f"instanceType is unknown at preview{': ' + problem if problem else ''}")
            return
        market_type = _get(
            inputs, "instanceMarketOptions.marketType", _get(lt_inputs, "instanceMarketOptions.marketType")
        )
        market = "spot" if spot or market_type == "spot" else "on-demand"
        if market_type == "capacity-block":
            market = "capacity-block"
        reservations = [
            str(c.get("urn")) for c in self.referenced(r, "capacityReservationSpecification", CAPACITY_RESERVATION)
        ]
        reservations += self.reservations_of(lt, "capacityReservationSpecification")
        self.fleet(r, itype, market, 1, 1, reservations)
        size = _count(_get(inputs, "rootBlockDevice.volumeSize"))
        if size:
            vol = _get(inputs, "rootBlockDevice.volumeType")
            self.root_volumes(r, [{"ebs": {"volumeSize": size, "volumeType": vol}}], 1, 1, "root volume")
        elif lt is not None:
            self.root_volumes(r, _get(lt_inputs, "blockDeviceMappings"), 1, 1, "root volume")

    def spot_request(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        self.instance(r, inputs, spot=True)

    def _fleet_type(self, r: Mapping[str, Any], specs: list[Any], configs: Any) -> str | None:
        """The dearest priced type a fleet names (its ceiling): launch specifications, override types, else the
        template's; None (after a skip) when only attribute-based requirements or unknown types name them."""
        overrides = [o for cfg in (configs if isinstance(configs, list) else []) for o in _get(cfg, "overrides") or []]
        named: list[Any] = [_get(s, "instanceType") for s in specs] + [_get(o, "instanceType") for o in overrides]
        abs_only = any(_get(o, "instanceRequirements") is not None for o in overrides)
        types = [t for t in named if isinstance(t, str) and not _is_unknown(t)]
        if not types:
            # An empty spec: only a template the configs depend on can match (names and ids are per config).
            lt, _ = self.launch_template(r, "launchTemplateConfigs", {})
            itype = _get((lt or {}).get("inputs"), "instanceType")
            if isinstance(itype, str) and not _is_unknown(itype):
                types = [itype]
        priced = [
            (found.on_demand or found.spot or 0.0, t)
            for t in types
            if isinstance(found := self.instance_rates(t), InstanceRates)
        ]
        if not priced:
            reason = (
                "overrides use instanceRequirements (types are chosen at launch)"
                if abs_only
                else ("no priced instance type in the fleet's specifications, overrides or launch template")
            )
            self.skip(r, f"instance type unknown: {reason}")
            return None
        return max(priced)[1]

    def ec2_fleet(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        tcs = _get(inputs, "targetCapacitySpecification") or {}
        total = _count(_get(tcs, "totalTargetCapacity"))
        od = _count(_get(tcs, "onDemandTargetCapacity", 0))
        spot = _count(_get(tcs, "spotTargetCapacity", 0))
        if total is None or od is None or spot is None:
            self.skip(r, "targetCapacitySpecification is unknown at preview")
            return
        itype = self._fleet_type(r, [], _get(inputs, "launchTemplateConfigs"))
        if itype is None:
            return
        # EC2 Fleet fills the target beyond the explicit on-demand/spot shares with the default capacity type
        # (on-demand when absent or not one gpucloud knows; str() keeps an odd value hashable).
        default = str(_get(tcs, "defaultTargetCapacityType"))
        rest = max(total - od - spot, 0)
        shares = {"on-demand": od, "spot": spot, "capacity-block": 0}
        shares[default if default in shares else "on-demand"] += rest
        for market, units in shares.items():
            self.fleet(r, itype, market, units, units)

    def spot_fleet(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        total = _count(_get(inputs, "targetCapacity"))
        od = _count(_get(inputs, "onDemandTargetCapacity", 0))
        if total is None or od is None:
            self.skip(r, "targetCapacity is unknown at preview")
            return
        specs = _get(inputs, "launchSpecifications") or []
        itype = self._fleet_type(r, specs if isinstance(specs, list) else [], _get(inputs, "launchTemplateConfigs"))
        if itype is None:
            return
        self.fleet(r, itype, "on-demand", min(od, total), min(od, total))
        self.fleet(r, itype, "spot", max(total - od, 0), max(total - od, 0))

    def capacity_reservation(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        itype = _get(inputs, "instanceType")
        count = _count(_get(inputs, "instanceCount"))
        if not isinstance(itype, str) or _is_unknown(itype) or count is None:
            self.skip(r, "instanceType/instanceCount are unknown at preview")
            return
        platform = _get(inputs, "instancePlatform", "Linux/UNIX")
        if platform != "Linux/UNIX":
            self.skip(r, f"instancePlatform {platform!r}: only Linux/UNIX rates are in the catalog")
            return
        found = self.instance_rates(itype)
        if isinstance(found, str):
            self.skip(r, found)
            return
        # Billed at the On-Demand rate whether instances run in it or not, so desired and ceiling match.
        self.on_demand(r, itype, count, count, found)

    def capacity_block_reservation(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        self.skip(
            r,
            "Capacity Block purchase: the whole fee (the offering's UpfrontFee) is charged up front at purchase; "
            "node groups running in the block are priced at the catalog's Capacity Block rate",
        )

    def lustre(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        capacity = _count(_get(inputs, "storageCapacity"))
        deployment = _get(inputs, "deploymentType", "SCRATCH_1")
        storage = _get(inputs, "storageType", "SSD")
        if capacity is None or _is_unknown(deployment) or _is_unknown(storage):
            self.skip(r, "storageCapacity/deploymentType are unknown at preview")
            return
        throughput: int | None = None
        if str(deployment).startswith("PERSISTENT"):
            throughput = _count(_get(inputs, "perUnitStorageThroughput"))
            if throughput is None:
                self.skip(r, f"{deployment} needs perUnitStorageThroughput (MB/s/TiB) to be priced")
                return
        retention = _count(_get(inputs, "automaticBackupRetentionDays"))
        if retention:
            self.skip(
                r,
                f"usage-billed: automatic daily backups kept {retention} days are billed by backup storage "
                f"({self.usage_rate(rates.FSX_BACKUP_GB_MONTH)}, incremental after the first full backup)",
                rates.unit_of(rates.FSX_BACKUP_GB_MONTH),
            )
        tier_key = (str(deployment), throughput, str(storage))
        if tier_key not in rates.FSX_LUSTRE_TIERS:
            tier = f" at {throughput} MB/s/TiB" if throughput else ""
            self.skip(r, f"no FSx for Lustre rate for {deployment} {storage}{tier}")
            return
        key = rates.fsx_lustre_key(*tier_key)
        rate = self.service_rate(r, key, rates.describe(key))
        if rate is not None:
            self.add(
                r,
                pricing="storage",
                quantity=capacity,
                max_quantity=capacity,
                unit_price=rate.usd,
                unit="GiB-month",
                rate=rate,
            )

    def eks_cluster(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        version = _get(inputs, "version")
        # Only STANDARD opts out of extended support: absent, unknown or EXTENDED all mean EKS's default, EXTENDED.
        support = _get(inputs, "upgradePolicy.supportType")
        name = str(r.get("name"))
        log_types = _get(inputs, "enabledClusterLogTypes")
        if isinstance(log_types, list) and log_types:
            self.skip(
                r,
                f"usage-billed: control plane logs ({', '.join(str(x) for x in log_types)}) are billed by GB "
                f"ingested into CloudWatch Logs ({self.usage_rate(rates.CLOUDWATCH_LOGS_INGEST_GB)}) and stored",
                rates.unit_of(rates.CLOUDWATCH_LOGS_INGEST_GB),
            )
        if version is None:
            # A new cluster gets EKS's default version, always one in standard support that day; it stays there
            # (no upgrades but EKS's own) and moves into extended support within 14 months unless supportType
            # is STANDARD: the ceiling carries the extended rate.
            ceiling = rates.EKS_STANDARD if support == "STANDARD" else rates.EKS_EXTENDED
            self.add(
                r,
                pricing="fixed",
                quantity=1,
                max_quantity=round(ceiling.usd / rates.EKS_STANDARD.usd, 6),
                unit_price=rates.EKS_STANDARD.usd,
                unit="hour",
                source=f"{rates.EKS_STANDARD.source}; version: {rates.EKS_DEFAULT_VERSION_SOURCE}",
                as_of=rates.EKS_STANDARD.as_of,
            )
            if support != "STANDARD":
                self.warnings.append(
                    f"{name}: no version given, so EKS picks its default version ({rates.EKS_DEFAULT_VERSION_SOURCE})"
                    f"; priced at the standard-support rate ${rates.EKS_STANDARD.usd}/h, ceiling at the extended rate "
                    f"${rates.EKS_EXTENDED.usd}/h once that version leaves standard support; pin `version`"
                )
            return
        if not isinstance(version, str) or _is_unknown(version):
            self.skip(r, "version is unknown at preview, so standard vs extended support is unknown")
            return
        rate = rates.EKS_STANDARD
        calendar = rates.EKS_CALENDAR.get(version)
        if support != "STANDARD" and rates.eks_in_extended_support(version, self.as_of):
            rate = rates.EKS_EXTENDED
        if calendar is not None:
            end_standard, end_extended = date.fromisoformat(calendar[1]), date.fromisoformat(calendar[2])
            horizon = self.as_of.toordinal() + rates.EKS_TIER_WARNING_DAYS
            if self.as_of <= end_standard and end_standard.toordinal() <= horizon:
                days = end_standard.toordinal() - self.as_of.toordinal()
                after = (
                    f"the control plane goes from ${rates.EKS_STANDARD.usd}/h to ${rates.EKS_EXTENDED.usd}/h "
                    f"(${rates.EKS_STANDARD.usd * rates.HOURS_PER_MONTH:,.0f} to "
                    f"${rates.EKS_EXTENDED.usd * rates.HOURS_PER_MONTH:,.0f} a month)"
                    if support != "STANDARD"
                    else "upgradePolicy.supportType STANDARD: EKS upgrades the cluster automatically"
                )
                self.warnings.append(
                    f"{name}: Kubernetes {version} leaves EKS standard support on {calendar[1]} ({days} days after "
                    f"{self.as_of.isoformat()}): {after} ({rates.EKS_CALENDAR_SOURCE})"
                )
            elif end_standard < self.as_of <= end_extended and end_extended.toordinal() <= horizon:
                self.warnings.append(
                    f"{name}: Kubernetes {version} leaves EKS extended support on {calendar[2]}: EKS then upgrades "
                    f"the cluster automatically ({rates.EKS_CALENDAR_SOURCE})"
                )
        self.add(
            r,
            pricing="fixed",
            quantity=1,
            max_quantity=1,
            unit_price=rate.usd,
            unit="hour",
            source=f"{rate.source}; tier: {rates.EKS_CALENDAR_SOURCE}" if calendar else rate.source,
            as_of=rate.as_of,
        )

    def eks_addon(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        if _get(inputs, "addonName") == "amazon-cloudwatch-observability":
            self.skip(
                r,
                "usage-billed: Container Insights (amazon-cloudwatch-observability) is billed per observation or "
                "custom metric sent and by the GB of performance logs ingested into CloudWatch Logs",
                "observations / metrics / GB ingested",
            )

    def nat_gateway(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        # Private NAT gateways bill the same hourly and per-GB rates as public ones.
        rate = self.service_rate(r, rates.NAT_GATEWAY_HOUR, "a NAT gateway")
        if rate is not None:
            self.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rate.usd, unit="hour", rate=rate)
        per_gb = self.usage_rate(rates.NAT_GATEWAY_PER_GB)
        self.skip(r, f"usage-billed: NAT data processing ({per_gb}) depends on traffic", "GB")

    def eip(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        self.add(
            r,
            pricing="fixed",
            quantity=1,
            max_quantity=1,
            unit_price=rates.PUBLIC_IPV4_HOUR.usd,
            unit="hour",
            rate=rates.PUBLIC_IPV4_HOUR,
        )

    def vpc_endpoint(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        kind = _get(inputs, "vpcEndpointType", "Gateway")
        if kind == "Gateway":
            return
        subnets = _get(inputs, "subnetIds")
        if kind != "Interface" or not isinstance(subnets, list):
            self.skip(r, f"{kind} endpoint: type or subnets unknown at preview")
            return
        rate = self.service_rate(r, rates.INTERFACE_ENDPOINT_AZ_HOUR, "an interface endpoint")
        if rate is None:
            return
        n = len(subnets)
        self.add(r, pricing="fixed", quantity=n, max_quantity=n, unit_price=rate.usd, unit="hour", rate=rate)
        self.skip(r, "usage-billed: interface endpoint data processing is billed per GB", "GB")

    def kms_key(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        rate = rates.KMS_KEY_MONTH
        self.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rate.usd, unit="month", rate=rate)
        if _get(inputs, "enableKeyRotation") is True:
            # A new key has one version; each of the next two rotations adds a billed version.
            extra = rates.KMS_ROTATION_MAX_EXTRA_VERSIONS
            self.add(
                r,
                pricing="fixed",
                quantity=0,
                max_quantity=extra,
                unit_price=rate.usd,
                unit="month",
                rate=rate,
                name=f"{r.get('name')} rotated key versions",
            )
        self.skip(r, "usage-billed: KMS requests beyond the free tier are billed per 10,000 requests", "requests")

    def ebs_volume(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        size = _count(_get(inputs, "size"))
        vol = _get(inputs, "type", rates.EBS_DEFAULT_TYPE)
        if size is None or vol not in rates.EBS_VOLUME_TYPES:
            self.skip(r, "size/type are unknown at preview (or the volume comes from a snapshot)")
            return
        self.volume(r, str(vol), size, _get(inputs, "iops"), _get(inputs, "throughput"), 1, 1, None)

    def volume(
        self,
        r: Mapping[str, Any],
        vol: str,
        gib: int,
        iops: Any,
        throughput: Any,
        desired: int,
        maximum: int,
        name: str | None,
    ) -> None:
        """Storage plus the provisioned performance above what the volume type includes."""
        rate = self.service_rate(r, rates.ebs_key(vol), f"EBS {vol} storage")
        if rate is None:
            return
        self.add(
            r,
            pricing="storage",
            quantity=desired * gib,
            max_quantity=maximum * gib,
            unit_price=rate.usd,
            unit="GiB-month",
            rate=rate,
            name=f"{name} ({vol})" if name else None,
        )
        base = name or str(r.get("name"))
        wanted: list[tuple[str, int, str]] = []
        n_iops, n_tput = _count(iops), _count(throughput)
        if vol == "gp3":
            if n_iops and n_iops > rates.GP3_BASELINE_IOPS:
                wanted.append(("IOPS above 3,000", n_iops - rates.GP3_BASELINE_IOPS, rates.ebs_iops_key(vol)))
            if n_tput and n_tput > rates.GP3_BASELINE_THROUGHPUT:
                wanted.append(
                    ("throughput above 125 MB/s", n_tput - rates.GP3_BASELINE_THROUGHPUT, rates.ebs_throughput_key(vol))
                )
        elif vol in rates.PIOPS_VOLUME_TYPES and n_iops:
            wanted.append(("provisioned IOPS", n_iops, rates.ebs_iops_key(vol)))
        for what, amount, item in wanted:
            extra = self.service_rate(r, item, f"EBS {vol} {what}")
            if extra is None:
                continue
            self.add(
                r,
                pricing="storage",
                quantity=desired * amount,
                max_quantity=maximum * amount,
                unit_price=extra.usd,
                unit=extra.unit,
                rate=extra,
                name=f"{base} {vol} {what}",
            )

    # ---- Karpenter ---------------------------------------------------------------------------------------
    def karpenter_node_pool(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        """Ceiling from `limits` resolved to instance counts of the admitted types; expected from the spec."""
        spec = _get(inputs, "spec") or {}
        requirements = _get(spec, "template.spec.requirements") or []
        if not isinstance(requirements, list):
            self.skip(r, "spec.template.spec.requirements is unknown at preview")
            return
        admitted, markets, notes = self.karpenter_admitted(requirements)
        name = str(r.get("name"))
        if not admitted:
            self.skip(r, f"Karpenter NodePool admits no instance type gpucloud can price in {self.region}: {notes}")
            return
        limits = _get(spec, "limits")
        limits = limits if isinstance(limits, Mapping) else {}
        ceiling_rate = "on-demand" if "on-demand" in markets else markets[0]
        expected_market = "spot" if "spot" in markets else ceiling_rate
        best: tuple[float, str, int] | None = None
        unbounded_types: list[str] = []
        for itype, (spec_, found) in admitted.items():
            usd = _market_rate(found, ceiling_rate)
            if usd is None:
                continue
            count = _karpenter_count(limits, spec_)
            if count is None:
                unbounded_types.append(itype)
                continue
            if best is None or count * usd > best[0] * best[2]:
                best = (usd, itype, count)
        gpu_pool = any(s is not None and s.accelerator_count > 0 for s, _ in admitted.values())
        if unbounded_types:
            kind = "GPU NodePool" if gpu_pool else "NodePool"
            reason = (
                f"UNBOUNDED CEILING: Karpenter {kind} {name} sets no limits that bound "
                f"{', '.join(sorted(unbounded_types)[:5])}{' ...' if len(unbounded_types) > 5 else ''}"
                f"{' (gpucloud holds no vCPU/memory figures for non-catalog types)' if limits else ''}: "
                "it can launch nodes without end; set spec.limits (cpu, memory, nvidia.com/gpu)"
            )
            self.unbounded.append({"urn": str(r.get("urn")), "reason": reason})
            self.warnings.append(reason)
        expected = _count(_get(spec, "replicas"))
        annotations = _get(inputs, "metadata.annotations")
        if expected is None and isinstance(annotations, Mapping):
            expected = _count(annotations.get(EXPECTED_NODES_ANNOTATION))
        if expected is None:
            expected = 0
            self.warnings.append(
                f"{name}: Karpenter launches nodes for pending pods only and the NodePool states no expected size "
                "(spec.replicas or the gpucloud.io/expected-nodes annotation): expected cost 0, ceiling from limits"
            )
        cheapest: tuple[float, str] | None = None
        for itype, (_, found) in admitted.items():
            usd = _market_rate(found, expected_market)
            if usd is not None and (cheapest is None or usd < cheapest[0]):
                cheapest = (usd, itype)
        if best is not None and cheapest is not None and (cheapest[1], expected_market) == (best[1], ceiling_rate):
            self.karpenter_item(r, best[1], ceiling_rate, min(expected, best[2]), best[2], admitted)
            return
        if cheapest is not None and expected:
            # Karpenter's price-capacity-optimized choice: spot when the pool allows it, the cheapest admitted type.
            self.karpenter_item(r, cheapest[1], expected_market, expected, 0, admitted)
        if best is not None:
            self.karpenter_item(r, best[1], ceiling_rate, 0, best[2], admitted)
        elif not unbounded_types:
            self.skip(r, f"no {ceiling_rate} rate for any admitted type in {self.region}: {notes}")

    def karpenter_item(
        self,
        r: Mapping[str, Any],
        itype: str,
        market: str,
        desired: int,
        maximum: int,
        admitted: Mapping[str, tuple[Any, InstanceRates]],
    ) -> None:
        found = admitted[itype][1]
        usd = _market_rate(found, market)
        if usd is None:
            return
        self.add(
            r,
            pricing=market,
            quantity=desired,
            max_quantity=maximum,
            unit_price=usd,
            unit="hour",
            instance_type=itype,
            source=found.origin(market)[0],
            as_of=found.origin(market)[1],
        )

    def karpenter_admitted(
        self, requirements: Sequence[Any]
    ) -> tuple[dict[str, tuple[Any, InstanceRates]], list[str], str]:
        """Priced instance types the requirements admit, the capacity types allowed, and notes on what was left."""
        markets = ["on-demand"]  # Karpenter's default capacity type
        candidates: set[str] | None = None
        predicates: list[tuple[str, str, list[str]]] = []
        for req in requirements:
            if not isinstance(req, Mapping):
                continue
            key, op = str(req.get("key")), str(req.get("operator"))
            values = [str(v) for v in req.get("values") or [] if not _is_unknown(v)]
            if key == "karpenter.sh/capacity-type" and op == "In":
                markets = [m for m in ("spot", "on-demand", "reserved") if m in values] or markets
                markets = ["on-demand" if m == "reserved" else m for m in markets]
            elif key == "node.kubernetes.io/instance-type" and op == "In":
                candidates = set(values) if candidates is None else candidates & set(values)
            else:
                predicates.append((key, op, values))
        if candidates is None:
            # No explicit list: every type gpucloud can price here, narrowed by the other requirements.
            candidates = set(self.catalog.instance_types) | set(rates.CPU_TYPES) | set(self._cpu_cache)
        admitted: dict[str, tuple[Any, InstanceRates]] = {}
        left: list[str] = []
        for itype in sorted(candidates):
            spec = self.catalog.find(itype)
            if not all(_karpenter_match(itype, spec, key, op, values) for key, op, values in predicates):
                continue
            found = self.instance_rates(itype)
            if isinstance(found, str):
                left.append(found)
                continue
            admitted[itype] = (spec, found)
        return admitted, list(dict.fromkeys(markets)), "; ".join(left[:3]) or "no type matches the requirements"


def _market_rate(found: InstanceRates, market: str) -> float | None:
    # Karpenter markets: spot, or on-demand (its "reserved" capacity type bills ODCRs at On-Demand rates).
    return found.spot if market == "spot" else found.on_demand


def _karpenter_count(limits: Mapping[str, Any], spec: Any) -> int | None:
    """Nodes of one type the pool's limits allow, or None when no limit bounds it.

    Karpenter's scheduler drops instance types that would exceed the pool's remaining limits, so each limit
    allows floor(limit / per-node capacity) nodes and the tightest one wins.
    """
    counts: list[int] = []
    for key, raw in limits.items():
        limit = _quantity(raw)
        if limit is None:
            continue
        if key == "cpu":
            per_node = float(spec.vcpu) if spec is not None else 0.0
        elif key == "memory":
            per_node = spec.memory_gib * 2**30 if spec is not None else 0.0
        elif key in _GPU_RESOURCES:
            if spec is None or _gpu_resource(spec) != key:
                # A type without this device consumes none of the limit; it is bounded only by the others.
                continue
            per_node = float(spec.accelerator_count)
        else:
            continue
        if per_node > 0:
            counts.append(math.floor(limit / per_node + 1e-9))
    return min(counts) if counts else None


def _gpu_resource(spec: Any) -> str:
    if spec.accelerator_kind == "neuron":
        return "aws.amazon.com/neuron"
    return "amd.com/gpu" if spec.manufacturer == "amd" else "nvidia.com/gpu"


_SIZE_SPLIT: Final = re.compile(r"^([a-z]+)(\d*)")


def _karpenter_label(itype: str, spec: Any, key: str) -> str | None:
    """The value of a well-known Karpenter label for a type (karpenter-provider-aws labels), or None."""
    family, _, size = itype.partition(".")
    match = _SIZE_SPLIT.match(family)
    if key in ("karpenter.k8s.aws/instance-family",):
        return family
    if key == "karpenter.k8s.aws/instance-size":
        return size
    if key == "karpenter.k8s.aws/instance-category":
        return match.group(1) if match else None
    if key == "karpenter.k8s.aws/instance-generation":
        return match.group(2) if match and match.group(2) else None
    if key == "karpenter.k8s.aws/instance-gpu-count":
        return str(spec.accelerator_count) if spec is not None and spec.accelerator_kind == "gpu" else None
    if key == "karpenter.k8s.aws/instance-gpu-manufacturer":
        return spec.manufacturer if spec is not None and spec.accelerator_kind == "gpu" else None
    if key == "karpenter.k8s.aws/instance-gpu-name":
        return spec.accelerator.lower() if spec is not None and spec.accelerator_kind == "gpu" else None
    if key == "karpenter.k8s.aws/instance-cpu":
        return str(spec.vcpu) if spec is not None else None
    if key == "karpenter.k8s.aws/instance-memory":
        return str(round(spec.memory_gib * 1024)) if spec is not None else None
    if key == "node.kubernetes.io/instance-type":
        return itype
    return None


def _karpenter_match(itype: str, spec: Any, key: str, op: str, values: Sequence[str]) -> bool:
    """Whether a type satisfies one requirement; a key gpucloud cannot evaluate admits the type (the ceiling
    errs high)."""
    if key not in _KNOWN_KEYS or (spec is None and key in _SPEC_KEYS):
        # A label gpucloud cannot evaluate for this type admits it: the ceiling errs high, never low. Keys that
        # do not narrow the types at all (zone, OS, architecture, capacity type, gpucloud.io/ labels) land here.
        return True
    label = _karpenter_label(itype, spec, key)
    if label is None:
        # The type lacks the label (a GPU label on a type without GPUs): only NotIn and DoesNotExist admit it.
        return op in ("NotIn", "DoesNotExist")
    if op == "In":
        return label in values
    if op == "NotIn":
        return label not in values
    if op == "DoesNotExist":
        return False
    # Gte and Lte: Karpenter 1.12's NodePool CRD (vendor/upstream/charts/karpenter-1.12.1) allows them next to Gt
    # and Lt; before, they admitted every type carrying the label, whatever its value.
    if op in ("Gt", "Lt", "Gte", "Lte") and values:
        try:
            number, bound = float(label), float(values[0])
        except ValueError:
            return True
        return {"Gt": number > bound, "Lt": number < bound, "Gte": number >= bound, "Lte": number <= bound}[op]
    # Exists (the type has the label), and an operator gpucloud does not know, admit the type.
    return True


# Labels every type has but only catalog types' specs give values for.
_SPEC_KEYS: Final = frozenset({"karpenter.k8s.aws/instance-cpu", "karpenter.k8s.aws/instance-memory"})
# Well-known labels karpenter-provider-aws sets that `_karpenter_label` can evaluate; other keys admit every type.
_KNOWN_KEYS: Final = frozenset(
    {
        "node.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-size",
        "karpenter.k8s.aws/instance-category",
        "karpenter.k8s.aws/instance-generation",
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-gpu-manufacturer",
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-cpu",
        "karpenter.k8s.aws/instance-memory",
    }
)


_HANDLERS: Final = {
    NODE_GROUP: _Pricer.node_group,
    ASG: _Pricer.autoscaling_group,
    INSTANCE: _Pricer.instance,
    SPOT_REQUEST: _Pricer.spot_request,
    EC2_FLEET: _Pricer.ec2_fleet,
    SPOT_FLEET: _Pricer.spot_fleet,
    CAPACITY_RESERVATION: _Pricer.capacity_reservation,
    CAPACITY_BLOCK_RESERVATION: _Pricer.capacity_block_reservation,
    LUSTRE: _Pricer.lustre,
    EKS_CLUSTER: _Pricer.eks_cluster,
    NAT_GATEWAY: _Pricer.nat_gateway,
    EIP: _Pricer.eip,
    VPC_ENDPOINT: _Pricer.vpc_endpoint,
    KMS_KEY: _Pricer.kms_key,
    "aws:kms/externalKey:ExternalKey": _Pricer.kms_key,
    "aws:kms/replicaKey:ReplicaKey": _Pricer.kms_key,
    "aws:kms/replicaExternalKey:ReplicaExternalKey": _Pricer.kms_key,
    EBS_VOLUME: _Pricer.ebs_volume,
    EKS_ADDON: _Pricer.eks_addon,
    **{t: _Pricer.karpenter_node_pool for t in KARPENTER_NODEPOOLS},
}


def classify(type_: str) -> str:
    """How the engine treats a resource type: priced, usage (listed with unit), billed-not-priced (listed with
    unit), free, or unclassified (listed as 'no price rule')."""
    if type_ in _HANDLERS:
        return "priced"
    if type_ in billable.USAGE_BILLED:
        return "usage"
    if type_ in billable.BILLED_NOT_PRICED:
        return "billed-not-priced"
    if type_ in billable.FREE_TYPES or type_.startswith(_FREE_PREFIXES):
        return "free"
    return "unclassified"


def on_demand_rates(
    instance_types: Iterable[str], region: str, catalog: Catalog | None = None
) -> dict[str, float | None]:
    """The On-Demand $/h this engine prices each type at in `region` (price book for catalog types, the region's
    service rates or a refresh for CPU types); None where the type has no On-Demand price there."""
    pricer = _Pricer([], PricingOptions(region=region), catalog or get_catalog())
    out: dict[str, float | None] = {}
    for itype in instance_types:
        found = pricer.instance_rates(itype)
        out[itype] = None if isinstance(found, str) else found.on_demand
    return out


def price_resources(
    resources: Sequence[Mapping[str, Any]],
    options: PricingOptions | None = None,
    catalog: Catalog | None = None,
    book: PriceBook | None = None,
) -> dict[str, Any]:
    """The design.md `cost` object for plain resource dicts (urn/type/name/inputs/dependencies/parent, optional
    custom and propertyDependencies), in engine view. Pure: no pulumi import, no I/O beyond the catalog."""
    pricer = _Pricer(resources, options or PricingOptions(), catalog or get_catalog(), book)
    pricer.price()
    return {
        "currency": rates.CURRENCY,
        "hours_per_month": rates.HOURS_PER_MONTH,
        "region": pricer.region,
        "as_of": pricer.as_of.isoformat(),
        "monthly": round(sum(i["monthly"] for i in pricer.items), 2),
        "monthly_ceiling": round(sum(i["monthly_ceiling"] for i in pricer.items), 2),
        # True when a resource (an unlimited Karpenter NodePool) can grow without bound: the ceiling is a floor.
        "ceiling_unbounded": bool(pricer.unbounded),
        "unbounded": pricer.unbounded,
        "items": pricer.items,
        "unpriced": pricer.unpriced,
        "warnings": pricer.warnings,
    }
