"""Instances on EC2's launch paths, priced from the fleet layer's pools: EKS managed node groups, Auto Scaling
groups (launch template, launch configuration, mixed instances), instances and spot requests, EC2 Fleet, Spot
Fleet, On-Demand Capacity Reservations and Capacity Block purchases."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gpucloud import fleet
from gpucloud.cost.pricer import InstanceRates, Pricer, prices
from gpucloud.fleet import types as T
from gpucloud.fleet.values import get

# The markets a pool's first purchase option maps to (capacity block nodes are priced at the block's rate).
_MARKET = {fleet.ON_DEMAND: "on-demand", fleet.SPOT: "spot", fleet.CAPACITY_BLOCK: "capacity-block"}


def _lt_devices(pool: fleet.Pool) -> tuple[fleet.BlockDevice, ...]:
    return pool.block_devices if pool.launch_template is not None else ()


@prices(T.NODE_GROUP)
def node_group(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    desired, maximum = pool.counts.desired, pool.counts.max
    if desired is None or maximum is None:
        pricer.skip(r, "scalingConfig.desiredSize/maxSize are unknown at preview")
        return
    if not pool.markets:
        capacity = inputs.get("capacityType")
        pricer.skip(r, f"capacityType {capacity!r} is unknown at preview or not ON_DEMAND/SPOT/CAPACITY_BLOCK")
        return
    if not pool.instance_types or "instance_types" in pool.unknown:
        if pool.unknown.get("instance_types") == "launchTemplate" and pool.launch_template_problem:
            pricer.skip(r, f"instance type unknown: {pool.launch_template_problem}")
        else:
            pricer.skip(r, "instance type is unknown at preview (instanceTypes / launch template instanceType)")
        return
    # Managed node groups launch the first listed type first (prioritized On-Demand); spot spreads over the
    # list, which the first type's price approximates for a same-shape list.
    pricer.fleet(r, pool.instance_types[0], _MARKET[pool.markets[0]], desired, maximum, pricer.reservations(pool))
    pricer.root_volumes(r, _lt_devices(pool), desired, maximum)


@prices(T.AUTOSCALING_GROUP)
def autoscaling_group(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    desired, maximum = pool.counts.desired, pool.counts.max
    if desired is None or maximum is None:
        pricer.skip(r, "desiredCapacity/minSize/maxSize are unknown at preview")
        return
    if isinstance(inputs.get("mixedInstancesPolicy"), Mapping):
        _mixed(pricer, r, pool, desired, maximum)
        return
    if pool.launch_configuration is None and pool.launch_template is None:
        if pool.launch_template_problem is not None:
            pricer.skip(r, f"instance type unknown: {pool.launch_template_problem}")
        else:
            pricer.skip(r, "no launch template or launch configuration found for the group")
        return
    if not pool.instance_types:
        source = "launch configuration" if pool.launch_configuration is not None else "launch template"
        pricer.skip(r, f"the {source}'s instanceType is unknown at preview")
        return
    market = _MARKET[pool.markets[0]] if pool.markets else "on-demand"
    if pool.launch_configuration is not None:
        pricer.fleet(r, pool.instance_types[0], market, desired, maximum)
        return
    pricer.fleet(r, pool.instance_types[0], market, desired, maximum, pricer.reservations(pool))
    pricer.root_volumes(r, pool.block_devices, desired, maximum)


def _mixed(pricer: Pricer, r: Mapping[str, Any], pool: fleet.Pool, desired: int, maximum: int) -> None:
    split = pool.split
    if split is None:
        pricer.skip(r, "instancesDistribution base/percentage are unknown at preview or out of range")
        return
    base, pct = split.on_demand_base, split.on_demand_percentage
    chosen: str | None = None
    reason = pool.launch_template_problem or "no instance type in the overrides or the launch template"
    if pool.requirements:
        reason = "overrides use instanceRequirements (types are chosen at launch)"
    passed: list[str] = []
    # The first named type with a usable price: On-Demand allocation is 'prioritized' by default, so the first
    # override is what the group launches first.
    for itype in pool.named_types:
        found = pricer.instance_rates(itype)
        needs_spot_only = pct == 0 and base == 0
        if isinstance(found, InstanceRates) and (
            found.on_demand is not None or (needs_spot_only and found.spot is not None)
        ):
            chosen = itype
            break
        reason = found if isinstance(found, str) else f"no price for override {itype}"
        passed.append(itype)
    if chosen is None:
        pricer.skip(r, f"instance type unknown: {reason}")
        return
    if passed:
        pricer.warnings.append(
            f"{r.get('name')}: overrides {', '.join(passed)} have no usable price in {pricer.region}; "
            f"priced as {chosen}, the first override that has one"
        )
    weight = pool.counts.weights.get(chosen, 1.0)

    def on_split(units: int) -> tuple[int, int]:
        od_base = min(base, units)
        # Auto Scaling rounds the On-Demand share above base up, in favour of On-Demand.
        od = od_base + math.ceil((units - od_base) * pct / 100)
        od_nodes = math.ceil(od / weight) if weight > 0 else od
        spot_nodes = math.ceil((units - od) / weight) if weight > 0 else units - od
        return od_nodes, spot_nodes

    od_desired, spot_desired = on_split(desired)
    od_max, spot_max = on_split(maximum)
    pricer.fleet(r, chosen, "on-demand", od_desired, od_max, pricer.reservations(pool))
    pricer.fleet(r, chosen, "spot", spot_desired, spot_max)
    pricer.root_volumes(r, _lt_devices(pool), od_desired + spot_desired, od_max + spot_max)


@prices(T.INSTANCE, T.SPOT_INSTANCE_REQUEST)
def instance(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    if not pool.instance_types:
        problem = pool.launch_template_problem
        pricer.skip(r, f"instanceType is unknown at preview{': ' + problem if problem else ''}")
        return
    market = _MARKET[pool.markets[0]] if pool.markets else "on-demand"
    pricer.fleet(r, pool.instance_types[0], market, 1, 1, pricer.reservations(pool))
    roots = [d for d in pool.block_devices if d.root]
    if roots and roots[0].size_gib:
        pricer.root_volumes(r, roots[:1], 1, 1, "root volume")
    elif pool.launch_template is not None:
        pricer.root_volumes(r, [d for d in pool.block_devices if not d.root], 1, 1, "root volume")


def _fleet_type(pricer: Pricer, r: Mapping[str, Any], pool: fleet.Pool) -> str | None:
    """The dearest priced type a fleet names (its ceiling); None (after a skip) when only attribute-based
    requirements or unknown types name them."""
    priced = [
        (found.on_demand or found.spot or 0.0, t)
        # No type named anywhere (an unknown override): the template the configs depend on names it.
        for t in pool.named_types or ((pool.template_type,) if pool.template_type else ())
        if isinstance(found := pricer.instance_rates(t), InstanceRates)
    ]
    if not priced:
        reason = (
            "overrides use instanceRequirements (types are chosen at launch)"
            if pool.requirements
            else "no priced instance type in the fleet's specifications, overrides or launch template"
        )
        pricer.skip(r, f"instance type unknown: {reason}")
        return None
    return max(priced)[1]


@prices(T.EC2_FLEET)
def ec2_fleet(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    split = pool.split
    total = pool.counts.desired
    if split is None or total is None or split.on_demand_target is None or split.spot_target is None:
        pricer.skip(r, "targetCapacitySpecification is unknown at preview")
        return
    itype = _fleet_type(pricer, r, pool)
    if itype is None:
        return
    # EC2 Fleet fills the target beyond the explicit on-demand/spot shares with the default capacity type
    # (on-demand when absent or not one gpucloud knows).
    default = str(get(inputs, "targetCapacitySpecification.defaultTargetCapacityType"))
    rest = max(total - split.on_demand_target - split.spot_target, 0)
    shares = {"on-demand": split.on_demand_target, "spot": split.spot_target, "capacity-block": 0}
    shares[default if default in shares else "on-demand"] += rest
    for market, units in shares.items():
        pricer.fleet(r, itype, market, units, units)


@prices(T.SPOT_FLEET_REQUEST)
def spot_fleet(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    total = pool.counts.desired
    od = pool.split.on_demand_target if pool.split is not None else None
    if total is None or od is None:
        pricer.skip(r, "targetCapacity is unknown at preview")
        return
    itype = _fleet_type(pricer, r, pool)
    if itype is None:
        return
    pricer.fleet(r, itype, "on-demand", min(od, total), min(od, total))
    pricer.fleet(r, itype, "spot", max(total - od, 0), max(total - od, 0))


@prices(T.CAPACITY_RESERVATION)
def capacity_reservation(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    n = pool.counts.desired
    if not pool.instance_types or n is None:
        pricer.skip(r, "instanceType/instanceCount are unknown at preview")
        return
    platform = inputs.get("instancePlatform", "Linux/UNIX")
    if platform != "Linux/UNIX":
        pricer.skip(r, f"instancePlatform {platform!r}: only Linux/UNIX rates are in the catalog")
        return
    found = pricer.instance_rates(pool.instance_types[0])
    if isinstance(found, str):
        pricer.skip(r, found)
        return
    # Billed at the On-Demand rate whether instances run in it or not, so desired and ceiling match.
    pricer.on_demand(r, pool.instance_types[0], n, n, found)


@prices(T.CAPACITY_BLOCK_RESERVATION)
def capacity_block_reservation(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pricer.skip(
        r,
        "Capacity Block purchase: the whole fee (the offering's UpfrontFee) is charged up front at purchase; "
        "node groups running in the block are priced at the catalog's Capacity Block rate",
    )
