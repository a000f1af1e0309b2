"""The pricer every handler shares: bookkeeping (items, unpriced entries, warnings), instance rates for the
plan's region, purchase of nodes on a market (reservations and commitments applied), volumes, and the registry
of per-family pricing handlers (gpucloud.cost.handlers), each registering itself with ``@prices``.

Instance rates come from the regional price book (gpucloud.prices.book) for the plan's region, never from another
region. Pools come from the fleet layer (gpucloud.fleet), the one reading of what a plan launches.
Import-light on purpose (catalog, fleet + stdlib): the policy pack calls `price_resources` from a stack policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any, Final

from gpucloud.catalog import Catalog, get_catalog
from gpucloud.cost import billable
from gpucloud.cost.options import COMPUTE_SAVINGS_PLAN_GAP, Commitment, PricingOptions
from gpucloud.fleet import BlockDevice, Fleet, Pool
from gpucloud.fleet import types as T
from gpucloud.fleet.values import UNKNOWN, count, get, is_unknown
from gpucloud.prices import rates
from gpucloud.prices.book import PriceBook, get_price_book, load_snapshot
from gpucloud.prices.instance_rates import InstanceRates, RateResolver
from gpucloud.prices.offerings import offering
from gpucloud.prices.provenance import rate_basis

__all__ = ["UNKNOWN", "Handler", "InstanceRates", "Pricer", "handler_for", "prices"]

DEFAULT_REGION: Final = "us-east-1"

# Types AWS does not bill for (configuration, identity, routing, Kubernetes objects): skipped silently.
FREE_PREFIXES: Final = (
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


Handler = Callable[["Pricer", Mapping[str, Any], Mapping[str, Any]], None]
_HANDLERS: dict[str, Handler] = {}


def prices(*types: str) -> Callable[[Handler], Handler]:
    """Register a pricing handler for resource types (as conformance checks register themselves)."""

    def deco(fn: Handler) -> Handler:
        for type_ in types:
            if type_ in _HANDLERS:
                raise ValueError(f"a pricing handler for {type_} is registered twice")
            _HANDLERS[type_] = fn
        return fn

    return deco


def handler_for(type_: str) -> Handler | None:
    return _HANDLERS.get(type_)


def handled_types() -> frozenset[str]:
    return frozenset(_HANDLERS)


def _is_unknown(value: Any) -> bool:
    return is_unknown(value)


def _get(inputs: Any, path: str, default: Any = None) -> Any:
    """The value at a dotted path of object keys, or `default`."""
    return get(inputs, path, default)


def _count(value: Any) -> int | None:
    """A whole-number size from an engine-view value (floats), or None when unknown or not a number."""
    return count(value)


def _num(value: Any) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def _is_custom(resource: Mapping[str, Any]) -> bool:
    custom = resource.get("custom")
    if isinstance(custom, bool):
        return custom
    type_ = str(resource.get("type", ""))
    # Provider resources look like pkg:module/sub:Type; components like gpucloud:pools:GpuNodePool.
    return type_.startswith("pulumi:providers:") or "/" in type_.split(":")[1 if ":" in type_ else 0]


# Markets priced at one hourly rate: the rates' field, and the reason when the type has no such rate.
_ONE_RATE_MARKETS: dict[str, tuple[str, str]] = {
    "spot": ("spot", "{instance_type} has no spot price in {region}"),
    "capacity-block": ("capacity_block", "no Capacity Block rate for {instance_type} in {region}"),
}


class Pricer:
    """One pricing run over a plan's resources: handlers add items and unpriced entries to it."""

    def __init__(
        self,
        resources: Sequence[Mapping[str, Any]],
        options: PricingOptions,
        catalog: Catalog,
        book: PriceBook | None = None,
        derived: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.resources = resources
        # Kubernetes objects the plan implies without registering them (rendered charts), as resource dicts whose
        # urn is the owner's (see derived_resource): priced by the same handlers as registered objects.
        self.derived = derived
        # What one handler works out once for the whole run (the plan's StorageClasses, ALB groups already billed).
        self.shared: dict[str, Any] = {}
        self.by_urn = {str(r.get("urn")): r for r in resources}
        self.options = options
        self.catalog = catalog
        self.book = book or (get_price_book() if catalog is get_catalog() else PriceBook(load_snapshot(), catalog))
        self.as_of = options.as_of or date.today()
        self.warnings: list[str] = []
        self.unbounded: list[dict[str, str]] = []
        # The fleet layer's reading of what the plan launches: every compute handler prices a pool of it.
        self.index = Fleet(resources, catalog=catalog)
        region = options.region or self.index.region
        self.region: str = region or DEFAULT_REGION
        self.index.region = self.region
        self._pools: dict[str, Pool] | None = None
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
        self.rates = RateResolver(self.region, catalog, self.book)
        self.cpu_cache = self.rates.cpu_cache
        self._service = self.rates.service

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
            if isinstance(capacity.get("instance_type"), str):
                self._not_offered(resource, capacity["instance_type"], capacity.get("nodes"), capacity.get("max_nodes"))
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
        basis: dict[str, Any] | None = None,
    ) -> None:
        factor = rates.HOURS_PER_MONTH if unit == "hour" else 1
        rate_source = rate.source if rate is not None else source
        rate_as_of = rate.as_of if rate is not None else as_of
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
                "rate_source": rate_source,
                "rate_as_of": rate_as_of,
                # Published (source + date), refreshed from AWS's APIs (date), or an estimate with its rule.
                "rate_basis": basis or rate_basis(rate_source, rate_as_of),
                **extra,
            }
        )

    # ---- rates -------------------------------------------------------------------------------------------
    def instance_rates(self, instance_type: str) -> InstanceRates | str:
        """The rates for a type in the plan's region, or the reason there are none."""
        return self.rates.of(instance_type)

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

    def _commitment_basis(self, commitment: Commitment, instance_type: str, found: InstanceRates) -> dict[str, Any]:
        """A reserved rate is published where the discount is given or the region's 1-year RI rate is listed;
        otherwise it is the family's planning discount: an estimate."""
        if commitment.discount is not None:
            return rate_basis("commitment discount given in gpucloud:pricing", found.as_of)
        if commitment.term == "1y" and found.reserved_1y is not None and commitment.kind != "compute-savings-plan":
            return rate_basis(found.source, found.as_of)
        spec = self.catalog.find(instance_type)
        family = spec.family if spec is not None else instance_type
        return {
            "kind": "estimate",
            "source": f"{found.source}+{commitment.term} {commitment.kind}",
            "as_of": found.as_of,
            "rule": f"commitment estimate: On-Demand x (1 - family {family}'s planning {commitment.term} discount, "
            "gpucloud/catalog/instances.json families)",
        }

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
        if market in _ONE_RATE_MARKETS:
            # Spot and Capacity Block nodes are billed at the market's one hourly rate (a block is prepaid at
            # purchase: this is its rate spread over the month the nodes run).
            field, missing = _ONE_RATE_MARKETS[market]
            rate = getattr(found, field)
            if rate is None:
                self.skip(
                    resource,
                    found.reasons.get(field, missing.format(instance_type=instance_type, region=self.region)),
                    capacity=unpriced,
                )
                return
            source, as_of = found.origin(market)
            self.add(
                resource,
                pricing=market,
                quantity=desired,
                max_quantity=maximum,
                unit_price=rate,
                unit="hour",
                instance_type=instance_type,
                source=source,
                as_of=as_of,
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

    def _not_offered(self, resource: Mapping[str, Any], instance_type: str, desired: Any, maximum: Any) -> None:
        """A line in the cost section when nodes drop out of the total because the region does not offer them."""
        found = offering(instance_type, self.region, self.book)
        if found.offered is False:
            self.warnings.append(
                f"{resource.get('name')}: {instance_type} is not offered in {self.region} ({found.source}, "
                f"{found.as_of or 'undated'}): its nodes ({desired} expected, {maximum} at most) are not in the total"
            )

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
                    basis=self._commitment_basis(commitment, instance_type, found),
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

    # ---- pools -------------------------------------------------------------------------------------------
    def pools(self) -> dict[str, Pool]:
        if self._pools is None:
            self._pools = {p.urn: p for p in self.index.pools()}
        return self._pools

    def pool(self, resource: Mapping[str, Any]) -> Pool:
        return self.pools()[str(resource.get("urn"))]

    def reservations(self, pool: Pool) -> list[str]:
        """The in-plan On-Demand Capacity Reservations the pool's nodes launch into (Capacity Blocks are priced
        through the nodes' capacity-block market instead)."""
        return [u for u in pool.capacity_reservations if self.by_urn.get(u, {}).get("type") == T.CAPACITY_RESERVATION]

    def root_volumes(
        self,
        resource: Mapping[str, Any],
        devices: Iterable[BlockDevice],
        desired: int,
        maximum: int,
        label: str = "root volumes",
    ) -> None:
        if not self.options.root_volumes or (desired == 0 and maximum == 0):
            return
        for device in devices:
            if not device.size_gib:
                continue  # the AMI's snapshot size applies: small, and unknown here
            vol = device.volume_type
            vol = vol if vol in rates.EBS_VOLUME_TYPES else rates.EBS_DEFAULT_TYPE
            self.volume(
                resource,
                str(vol),
                device.size_gib,
                device.iops,
                device.throughput,
                desired,
                maximum,
                f"{resource.get('name')} {label}",
            )

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

    def kube_objects(self) -> list[Mapping[str, Any]]:
        """Every Kubernetes API object of the plan, registered or derived (their inputs are the manifests)."""
        registered = [r for r in self.resources if str(r.get("type", "")).startswith("kubernetes:") and _k8s_object(r)]
        return [*registered, *self.derived]

    # ---- the run -----------------------------------------------------------------------------------------
    def price(self) -> None:
        for pool in self.pools().values():
            if pool.type == T.CAPACITY_RESERVATION and pool.counts.desired is not None:
                self.reservation_room[pool.urn] = [pool.counts.desired, pool.counts.desired]
        for r in self.resources:
            type_ = str(r.get("type", ""))
            if not _is_custom(r):
                continue
            handler = handler_for(type_)
            if handler is not None:
                handler(self, r, r.get("inputs") or {})
            elif type_ in billable.USAGE_BILLED:
                reason, unit = billable.USAGE_BILLED[type_]
                self.skip(r, f"usage-billed: {reason}", unit)
            elif type_ in billable.BILLED_NOT_PRICED:
                reason, unit = billable.BILLED_NOT_PRICED[type_]
                self.skip(r, f"billed, no rate in gpucloud: {reason}", unit)
            elif is_free(type_):
                continue
            else:
                self.skip(r, f"no price rule for {type_}")
        for d in self.derived:
            handler = handler_for(str(d.get("type", "")))
            if handler is not None:
                handler(self, d, d.get("inputs") or {})


def _k8s_object(r: Mapping[str, Any]) -> bool:
    # Helm releases, charts and YAML bundles are what render objects, not objects themselves.
    return not str(r.get("type", "")).startswith(("kubernetes:helm.sh/", "kubernetes:yaml", "kubernetes:kustomize"))


def k8s_token(manifest: Mapping[str, Any]) -> str:
    """The Pulumi type token of a manifest ("v1" Service -> kubernetes:core/v1:Service)."""
    api = str(manifest.get("apiVersion", ""))
    return f"kubernetes:{api if '/' in api else 'core/' + api}:{manifest.get('kind', '')}"


def derived_resource(owner: str, source: str, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A rendered object as the resource dict handlers read: the owner's URN, the object's ref as its name."""
    raw = manifest.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    where = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    return {
        "urn": owner,
        "type": k8s_token(manifest),
        "name": f"{manifest.get('kind')} {where} ({source})",
        "inputs": manifest,
        "custom": True,
        "derived": source,
    }


def is_free(type_: str) -> bool:
    return type_ in billable.FREE_TYPES or type_.startswith(FREE_PREFIXES)
