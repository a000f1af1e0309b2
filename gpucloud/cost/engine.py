"""Prices the raw resources of any recorded plan (engine view: camelCase inputs, unknowns as the sentinel).

Import-light on purpose (catalog + stdlib): the policy pack calls `price_resources` from a stack policy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from gpucloud.catalog import Catalog, get_catalog, is_valid_ec2_instance_type
from gpucloud.cost import rates
from gpucloud.cost.options import COMPUTE_SAVINGS_PLAN_GAP, Commitment, PricingOptions
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
EC2_FLEET: Final = "aws:ec2/fleet:Fleet"
SPOT_FLEET: Final = "aws:ec2/spotFleetRequest:SpotFleetRequest"

# Billed by use (storage, requests, data, events), so a plan cannot price them.
USAGE_BILLED: Final[dict[str, str]] = {
    "aws:s3/bucket:Bucket": "S3 is billed by stored GB, requests and transfer, not by the bucket",
    "aws:s3/bucketV2:BucketV2": "S3 is billed by stored GB, requests and transfer, not by the bucket",
    "aws:cloudwatch/logGroup:LogGroup": "CloudWatch Logs is billed by ingested and stored GB",
    "aws:sqs/queue:Queue": "SQS is billed by requests",
    "aws:ecr/repository:Repository": "ECR is billed by stored GB and transfer",
    "aws:dynamodb/table:Table": "DynamoDB is billed by requests/capacity and storage",
    "aws:ec2/flowLog:FlowLog": "flow logs are billed by the log volume delivered",
    "aws:cloudwatch/metricAlarm:MetricAlarm": "CloudWatch alarms are billed per alarm-month beyond the free tier",
    "aws:prometheus/workspace:Workspace": "Amazon Managed Prometheus is billed by samples ingested and stored",
    "aws:grafana/workspace:Workspace": "Amazon Managed Grafana is billed per active user",
    "aws:efs/fileSystem:FileSystem": "EFS is billed by stored GB",
    "aws:fsx/backup:Backup": "FSx backups are billed by stored GB",
}

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
    spot_estimated: bool


def _is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


@functools.lru_cache(maxsize=256)
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _get(inputs: Any, path: str, default: Any = None) -> Any:
    value = inputs
    for part in _parts(path):
        # dict first: engine-view inputs are plain dicts, and ABC isinstance checks dominate a big plan's time.
        if type(value) is dict or isinstance(value, Mapping):
            if part not in value:
                return default
            value = value[part]
        elif type(value) is list and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return default
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


class _Pricer:
    def __init__(self, resources: Sequence[Mapping[str, Any]], options: PricingOptions, catalog: Catalog) -> None:
        self.resources = resources
        self.by_urn = {str(r.get("urn")): r for r in resources}
        self.options = options
        self.catalog = catalog
        self.as_of = options.as_of or date.today()
        self.items: list[dict[str, Any]] = []
        self.unpriced: list[dict[str, str]] = []
        # Nodes each in-plan capacity reservation still has room for: [at desired sizes, at max sizes].
        self.reservation_room: dict[str, list[int]] = {}
        self.commitment_room: list[list[int | None]] = [[c.count, c.count] for c in options.commitments]
        self._cpu_cache = region_prices(rates.RATES_REGION)
        self._rates_memo: dict[str, InstanceRates | str] = {}

    # ---- bookkeeping -------------------------------------------------------------------------------------
    def skip(self, resource: Mapping[str, Any], reason: str) -> None:
        self.unpriced.append({"urn": str(resource.get("urn")), "reason": reason})

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
    ) -> None:
        factor = rates.HOURS_PER_MONTH if unit == "hour" else 1
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
            }
        )

    # ---- rates -------------------------------------------------------------------------------------------
    def instance_rates(self, instance_type: str) -> InstanceRates | str:
        """The rates for a type, or the reason there are none."""
        memo = self._rates_memo.get(instance_type)
        if memo is not None:
            return memo
        result: InstanceRates | str
        spec = self.catalog.find(instance_type)
        if spec is not None:
            spot = spec.spot_usd
            estimated = False
            if spot is None and spec.spot and spec.on_demand_usd is not None:
                spot = spec.on_demand_usd * (1 - self.catalog.family_pricing(spec.family).spot_discount)
                estimated = True
            result = InstanceRates(spec.on_demand_usd, spot if spec.spot else None, spec.capacity_block_usd, estimated)
        elif instance_type in rates.CPU_ON_DEMAND_HOUR or instance_type in self._cpu_cache:
            cached = self._cpu_cache.get(instance_type, {})
            result = InstanceRates(
                cached.get("on_demand_usd", rates.CPU_ON_DEMAND_HOUR.get(instance_type)),
                cached.get("spot_usd"),
                None,
                False,
            )
        elif not is_valid_ec2_instance_type(instance_type):
            result = f"{instance_type!r} is not an EC2 instance type"
        else:
            result = (
                f"{instance_type} is not in the gpucloud catalog or the cost rate table; "
                f"run `gpucloud prices refresh --types {instance_type}` to price it"
            )
        self._rates_memo[instance_type] = result
        return result

    def _commitment_discount(self, commitment: Commitment, instance_type: str) -> float:
        if commitment.discount is not None:
            return commitment.discount
        spec = self.catalog.find(instance_type)
        if spec is None:
            return 0.0
        fam = self.catalog.family_pricing(spec.family)
        discount = fam.reserved_1y if commitment.term == "1y" else fam.reserved_3y
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
        if isinstance(found, str):
            self.skip(resource, found)
            return
        if market == "spot":
            if found.spot is None:
                self.skip(resource, f"{instance_type} has no spot price (not sold as spot, or no On-Demand price)")
                return
            self.add(
                resource,
                pricing="spot",
                quantity=desired,
                max_quantity=maximum,
                unit_price=found.spot,
                unit="hour",
                instance_type=instance_type,
            )
            return
        if market == "capacity-block":
            if found.capacity_block is None:
                self.skip(resource, f"the catalog holds no Capacity Block rate for {instance_type}")
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
            self.skip(
                resource,
                f"{instance_type} has no On-Demand price in the catalog (sold through Capacity Blocks only, or "
                "not priced yet: run `gpucloud prices refresh`)",
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
                    unit_price=found.on_demand * (1 - self._commitment_discount(commitment, instance_type)),
                    unit="hour",
                    instance_type=instance_type,
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
        by_type: dict[str, int] = {}
        for mapping in mappings:
            ebs = mapping.get("ebs") if isinstance(mapping, Mapping) else None
            size = _count(_get(ebs, "volumeSize")) if isinstance(ebs, Mapping) else None
            if not size:
                continue  # the AMI's snapshot size applies: small, and unknown here
            vol = _get(ebs, "volumeType")
            vol = vol if isinstance(vol, str) and vol in rates.EBS_GIB_MONTH else rates.EBS_DEFAULT_TYPE
            by_type[vol] = by_type.get(vol, 0) + size
        for vol, gib in by_type.items():
            self.add(
                resource,
                pricing="storage",
                quantity=desired * gib,
                max_quantity=maximum * gib,
                unit_price=rates.EBS_GIB_MONTH[vol].usd,
                unit="GiB-month",
                name=f"{resource.get('name')} {label} ({vol})",
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
            elif type_ in USAGE_BILLED:
                self.skip(r, f"usage-billed: {USAGE_BILLED[type_]}")
            elif type_.startswith(_FREE_PREFIXES):
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
            str(_get(lt_inputs, "instanceMarketOptions.marketType", "")), "on-demand"
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
        else:
            itype = _get(lt_inputs, "instanceType")
            if isinstance(itype, str) and not _is_unknown(itype):
                chosen = itype
        if chosen is None:
            self.skip(r, f"instance type unknown: {reason}")
            return

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
        named: list[Any] = [_get(s, "instanceType") for s in specs]
        abs_only = False
        for cfg in configs if isinstance(configs, list) else []:
            for o in _get(cfg, "overrides") or []:
                named.append(_get(o, "instanceType"))
                abs_only = abs_only or _get(o, "instanceRequirements") is not None
        types = [t for t in named if isinstance(t, str) and not _is_unknown(t)]
        if not types:
            lt, _ = self.launch_template(r, "launchTemplateConfigs", {"id": None})
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
        # EC2 Fleet fills the target beyond the explicit on-demand/spot shares with the default capacity type.
        default = str(_get(tcs, "defaultTargetCapacityType", "on-demand"))
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
        rate = rates.FSX_LUSTRE_GB_MONTH.get((str(deployment), throughput, str(storage)))
        if rate is None:
            tier = f" at {throughput} MB/s/TiB" if throughput else ""
            self.skip(r, f"no FSx for Lustre rate for {deployment} {storage}{tier}")
            return
        self.add(r, pricing="storage", quantity=capacity, max_quantity=capacity, unit_price=rate.usd, unit="GiB-month")

    def eks_cluster(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        version = _get(inputs, "version")
        support = _get(inputs, "upgradePolicy.supportType", "EXTENDED")
        rate = rates.EKS_STANDARD
        if support != "STANDARD":
            if not isinstance(version, str) or _is_unknown(version):
                self.skip(r, "version is unknown at preview, so standard vs extended support is unknown")
                return
            if rates.eks_in_extended_support(version, self.as_of):
                rate = rates.EKS_EXTENDED
        self.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rate.usd, unit="hour")

    def nat_gateway(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        self.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rates.NAT_GATEWAY_HOUR.usd, unit="hour")
        self.skip(r, f"NAT data processing (${rates.NAT_GATEWAY_PER_GB.usd}/GB) depends on traffic: not priced")

    def eip(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        self.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rates.PUBLIC_IPV4_HOUR.usd, unit="hour")

    def vpc_endpoint(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        kind = _get(inputs, "vpcEndpointType", "Gateway")
        if kind == "Gateway":
            return
        subnets = _get(inputs, "subnetIds")
        if kind != "Interface" or not isinstance(subnets, list):
            self.skip(r, f"{kind} endpoint: type or subnets unknown at preview")
            return
        n = len(subnets)
        self.add(
            r, pricing="fixed", quantity=n, max_quantity=n, unit_price=rates.INTERFACE_ENDPOINT_AZ_HOUR.usd, unit="hour"
        )

    def kms_key(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        self.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rates.KMS_KEY_MONTH.usd, unit="month")

    def ebs_volume(self, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        size = _count(_get(inputs, "size"))
        vol = _get(inputs, "type", rates.EBS_DEFAULT_TYPE)
        if size is None or vol not in rates.EBS_GIB_MONTH:
            self.skip(r, "size/type are unknown at preview (or the volume comes from a snapshot)")
            return
        self.add(
            r,
            pricing="storage",
            quantity=size,
            max_quantity=size,
            unit_price=rates.EBS_GIB_MONTH[vol].usd,
            unit="GiB-month",
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
    EBS_VOLUME: _Pricer.ebs_volume,
}


def price_resources(
    resources: Sequence[Mapping[str, Any]],
    options: PricingOptions | None = None,
    catalog: Catalog | None = None,
) -> dict[str, Any]:
    """The design.md `cost` object for plain resource dicts (urn/type/name/inputs/dependencies/parent, optional
    custom and propertyDependencies), in engine view. Pure: no pulumi import, no I/O beyond the catalog."""
    pricer = _Pricer(resources, options or PricingOptions(), catalog or get_catalog())
    pricer.price()
    return {
        "currency": rates.CURRENCY,
        "hours_per_month": rates.HOURS_PER_MONTH,
        "monthly": round(sum(i["monthly"] for i in pricer.items), 2),
        "monthly_ceiling": round(sum(i["monthly_ceiling"] for i in pricer.items), 2),
        "items": pricer.items,
        "unpriced": pricer.unpriced,
    }
