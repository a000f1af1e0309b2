"""The launch paths of EC2 and EKS: each resource that starts instances as a pool, joined to its launch
template or configuration, subnets, capacity reservations and provider."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from gpucloud.fleet import labels as L
from gpucloud.fleet import model as M
from gpucloud.fleet import selection
from gpucloud.fleet import types as T
from gpucloud.fleet.bootstrap import Bootstrap, parse_user_data
from gpucloud.fleet.joins import Index, Record
from gpucloud.fleet.values import (
    count,
    decode_user_data,
    flag,
    get,
    is_unknown,
    known,
    mappings,
    number,
    obj,
    strings,
    tag_map,
    text,
)

# What EKS launches for a node group that names no instance type and no launch template (CreateNodegroup).
EKS_DEFAULT_INSTANCE_TYPE: Final = "t3.medium"
_EKS_EFFECT: Final = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
_EKS_MARKET: Final = {"ON_DEMAND": M.ON_DEMAND, "SPOT": M.SPOT, "CAPACITY_BLOCK": M.CAPACITY_BLOCK}
_LT_MARKET: Final = {"spot": M.SPOT, "capacity-block": M.CAPACITY_BLOCK}
_RESERVATION_TYPES: Final = (T.CAPACITY_RESERVATION, T.CAPACITY_BLOCK_RESERVATION)


# ---- where a value could not be read -----------------------------------------------------------------------


def unknown_at(inputs: Any, path: str) -> str | None:
    """The part of dotted ``path`` whose value is unknown at preview ("scalingConfig" when the whole block is),
    or None when the path is known or absent."""
    value, walked = inputs, []
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
        walked.append(part)
        if is_unknown(value):
            return ".".join(walked)
    return None


def _open(pool: M.Pool, key: str, source: Record, *paths: str, reason: str = "") -> None:
    """Record the first of ``paths`` on ``source`` that is unknown (or, with a reason, the first path as is)."""
    if key in pool.open:
        return
    for path in paths:
        found = path if reason else unknown_at(source.inputs, path)
        if found:
            pool.open[key] = M.Open(source.urn, found, reason)
            return


def _unknown_element(value: Any, path: str) -> str | None:
    """``path.i`` of the first unknown element of a list, ``path`` when the list itself is unknown."""
    if is_unknown(value):
        return path
    if isinstance(value, list):
        for i, v in enumerate(value):
            if is_unknown(v):
                return f"{path}.{i}"
    return None


# ---- what a launch template or configuration says about its nodes -------------------------------------------


def _block_devices(
    mappings_: Any, fleet: Index, holder: Record | None, prop: str, root: bool = False
) -> tuple[M.BlockDevice, ...]:
    keys = tuple(k.urn for k in fleet.referenced(holder, prop, T.KMS_KEY)) if holder is not None else ()
    out = []
    for m in mappings(mappings_):
        ebs = obj(m.get("ebs")) or m
        out.append(
            M.BlockDevice(
                device_name=text(m.get("deviceName")),
                size_gib=count(ebs.get("volumeSize")),
                volume_type=text(ebs.get("volumeType")),
                iops=ebs.get("iops"),
                throughput=ebs.get("throughput"),
                encrypted=flag(ebs.get("encrypted")),
                kms_key_id=text(ebs.get("kmsKeyId", ebs.get("kmsKeyID"))),
                kms_key_urns=keys,
                delete_on_termination=flag(ebs.get("deleteOnTermination")),
                snapshot_id=text(ebs.get("snapshotId", ebs.get("snapshotID"))),
                root=root,
            )
        )
    return tuple(out)


def _own_devices(fleet: Index, r: Record) -> tuple[M.BlockDevice, ...]:
    """An instance's or launch configuration's own volumes: rootBlockDevice, then ebsBlockDevices."""
    root = r.inputs.get("rootBlockDevice")
    first = _block_devices([root], fleet, r, "rootBlockDevice", root=True) if isinstance(root, Mapping) else ()
    return first + _block_devices(r.inputs.get("ebsBlockDevices"), fleet, r, "ebsBlockDevices")


def _lt_market(inputs: Mapping[str, Any]) -> tuple[str, ...]:
    market = get(inputs, "instanceMarketOptions.marketType")
    if not known(market):
        return ()
    return (_LT_MARKET.get(str(market), M.ON_DEMAND),)


def _public_ip(interfaces: Sequence[Mapping[str, Any]]) -> bool | None:
    for n in interfaces:
        found = flag(n.get("associatePublicIpAddress"))
        if found is not None:
            return found
    return None


def _describe(pool: M.Pool, fleet: Index, lt: Record | None) -> Bootstrap:
    """Fill what the launch template says (metadata, block devices, interfaces, user data); the bootstrap."""
    if lt is None:
        return Bootstrap({}, [], True, False)
    inputs = lt.inputs
    pool.launch_template = lt.urn
    pool.template_type = text(inputs.get("instanceType"))
    pool.metadata_options = dict(get(inputs, "metadataOptions") or {})
    pool.block_devices = _block_devices(get(inputs, "blockDeviceMappings"), fleet, lt, "blockDeviceMappings")
    pool.network_interfaces = tuple(mappings(get(inputs, "networkInterfaces")))
    pool.public_ip = _public_ip(pool.network_interfaces)
    raw = inputs.get("userData")
    pool.user_data = decode_user_data(raw)
    pool.user_data_known = raw is None or known(raw)
    pool.capacity_reservations = tuple(
        c.urn for c in fleet.referenced(lt, "capacityReservationSpecification", *_RESERVATION_TYPES)
    )
    image = text(inputs.get("imageId"))
    if image:
        pool.ami_release = image
    return parse_user_data(raw)


def _bootstrap_into(pool: M.Pool, boot: Bootstrap) -> None:
    pool.labels = {**boot.labels, **pool.labels}
    pool.taints = (*pool.taints, *boot.taints)
    if boot.bottlerocket and not pool.ami_family:
        pool.ami_family = "bottlerocket"


# ---- the launch paths -----------------------------------------------------------------------------------------


def node_group(fleet: Index, r: Record) -> M.Pool:
    inputs = r.inputs
    pool = M.Pool(r.urn, r.name, r.type, M.MANAGED, types_from="instanceTypes", region=fleet.provider_region(r))
    lt_spec = inputs.get("launchTemplate")
    lt, pool.launch_template_problem = fleet.launch_template(r, "launchTemplate", lt_spec)
    types = inputs.get("instanceTypes")
    lt_type = get(lt.inputs, "instanceType") if lt is not None else None
    if known(lt_type) and not strings(types):
        # EKS refuses instanceTypes beside a template that names the type, so the template decides; in a
        # preview the group's instanceTypes output stays unknown until EKS copies it from the template.
        pool.instance_types, pool.types_from = (str(lt_type),), "launchTemplate.instanceType"
    elif isinstance(types, list) and types:
        pool.instance_types = tuple(strings(types))
        if len(pool.instance_types) < len(types):
            pool.unknown["instance_types"] = "instanceTypes"
            pool.open["instance_types"] = M.Open(r.urn, _unknown_element(types, "instanceTypes") or "instanceTypes")
    elif lt is not None and is_unknown(lt_type):
        pool.unknown["instance_types"] = "instanceTypes"
        pool.open["instance_types"] = M.Open(lt.urn, "instanceType")
    elif is_unknown(types):
        pool.unknown["instance_types"] = "instanceTypes"
        pool.open["instance_types"] = M.Open(r.urn, "instanceTypes")
    elif lt_spec is None:
        pool.instance_types, pool.types_from = (EKS_DEFAULT_INSTANCE_TYPE,), "EKS default"
    else:
        pool.unknown["instance_types"] = "launchTemplate"
        why = pool.launch_template_problem or "the launch template names no instance type"
        pool.open["instance_types"] = M.Open(r.urn, "launchTemplate", why)
    scaling = obj(inputs.get("scalingConfig"))
    pool.counts = M.Counts(
        count(scaling.get("minSize")), count(scaling.get("desiredSize")), count(scaling.get("maxSize"))
    )
    for size in ("desiredSize", "maxSize"):
        if count(scaling.get(size)) is None:
            pool.unknown.setdefault("counts", f"scalingConfig.{size}")
    _open(pool, "desired", r, "scalingConfig.desiredSize")
    _open(pool, "max_size", r, "scalingConfig.maxSize")
    capacity = inputs.get("capacityType", "ON_DEMAND")
    if isinstance(capacity, str) and capacity in _EKS_MARKET:
        pool.markets = (_EKS_MARKET[capacity],)
    else:
        pool.unknown["markets"] = "capacityType"
        pool.open["markets"] = M.Open(r.urn, "capacityType", "" if is_unknown(capacity) else "not an EKS capacity type")
    _open(pool, "subnet_ids", r, "subnetIds")
    pool.zones, pool.subnets = fleet.zones(r, "subnetIds")
    pool.subnet_ids = len(inputs["subnetIds"]) if isinstance(inputs.get("subnetIds"), list) else 0
    pool.tags = tag_map(inputs.get("tags"))
    boot = _describe(pool, fleet, lt)
    pool.labels = {str(k): str(v) for k, v in (inputs.get("labels") or {}).items() if known(v)}
    name = inputs.get("nodeGroupName")
    if known(name):
        # EKS labels each node with its group's name; an unknown name (generated at create) is left out.
        pool.labels[L.EKS_NODEGROUP] = str(name)
    pool.taints = tuple(
        M.Taint(
            str(t.get("key", "")),
            str(t.get("value") or ""),
            _EKS_EFFECT.get(str(t.get("effect")), str(t.get("effect"))),
        )
        for t in mappings(inputs.get("taints"))
    )
    _bootstrap_into(pool, boot)
    pool.ami_family = text(inputs.get("amiType")) or pool.ami_family
    pool.ami_release = text(inputs.get("releaseVersion")) or pool.ami_release
    pool.update_strategy = dict(inputs.get("updateConfig") or {})
    return pool


def autoscaling_group(fleet: Index, r: Record) -> M.Pool:
    inputs = r.inputs
    pool = M.Pool(r.urn, r.name, r.type, M.SELF_MANAGED, region=fleet.provider_region(r))
    desired_raw = inputs.get("desiredCapacity")
    pool.counts = M.Counts(
        count(inputs.get("minSize")),
        count(desired_raw) if desired_raw is not None else count(inputs.get("minSize")),
        count(inputs.get("maxSize")),
    )
    if pool.counts.desired is None or pool.counts.max is None:
        pool.unknown["counts"] = "desiredCapacity/minSize/maxSize"
    _open(pool, "desired", r, "desiredCapacity", "minSize")
    _open(pool, "max_size", r, "maxSize")
    _open(pool, "subnet_ids", r, "vpcZoneIdentifiers")
    mip = inputs.get("mixedInstancesPolicy")
    lc: Record | None = None
    if isinstance(mip, Mapping):
        pool.types_from = "mixedInstancesPolicy.launchTemplate.overrides"
        lt, pool.launch_template_problem = fleet.launch_template(
            r, "mixedInstancesPolicy", get(mip, "launchTemplate.launchTemplateSpecification")
        )
        named, admitted, weights, reqs, unknown = _overrides(fleet, mappings(get(mip, "launchTemplate.overrides")), lt)
        dist = get(mip, "instancesDistribution") or {}
        base, pct = (
            count(get(dist, "onDemandBaseCapacity", 0)),
            count(get(dist, "onDemandPercentageAboveBaseCapacity", 100)),
        )
        if base is None or pct is None or pct > 100:
            pool.unknown["markets"] = "mixedInstancesPolicy.instancesDistribution"
            dist_path = "mixedInstancesPolicy.instancesDistribution"
            _open(
                pool,
                "markets",
                r,
                f"{dist_path}.onDemandBaseCapacity",
                f"{dist_path}.onDemandPercentageAboveBaseCapacity",
            )
            _open(pool, "markets", r, dist_path, reason="not a valid instances distribution")
        else:
            pool.split = M.MarketSplit(
                on_demand_base=base,
                on_demand_percentage=pct,
                spot_allocation=text(get(dist, "spotAllocationStrategy")),
                on_demand_allocation=text(get(dist, "onDemandAllocationStrategy")),
            )
            pool.markets = tuple(m for m, on in ((M.ON_DEMAND, base > 0 or pct > 0), (M.SPOT, pct < 100)) if on)
        pool.counts = M.Counts(pool.counts.min, pool.counts.desired, pool.counts.max, weights)
        _choose(pool, named, admitted, reqs)
        if unknown is not None:
            pool.unknown["instance_types"] = "mixedInstancesPolicy.launchTemplate.overrides"
            pool.open["instance_types"] = M.Open(r.urn, f"mixedInstancesPolicy.launchTemplate.overrides.{unknown}")
    else:
        lt, pool.launch_template_problem = fleet.launch_template(r, "launchTemplate", inputs.get("launchTemplate"))
        if lt is None and pool.launch_template_problem is None:
            lcs = fleet.referenced(r, "launchConfiguration", T.LAUNCH_CONFIGURATION)
            lc = lcs[0] if lcs else None
        source = lt or lc
        pool.types_from = "launchConfiguration.instanceType" if lc is not None else "launchTemplate.instanceType"
        itype = get(source.inputs, "instanceType") if source is not None else None
        if text(itype):
            pool.instance_types = (str(itype),)
        elif source is not None and is_unknown(itype):
            pool.open["instance_types"] = M.Open(source.urn, "instanceType")
        elif pool.launch_template_problem:
            pool.open["instance_types"] = M.Open(r.urn, "launchTemplate", pool.launch_template_problem)
        if lc is not None:
            pool.launch_configuration = lc.urn
            pool.markets = (M.SPOT,) if get(lc.inputs, "spotPrice") not in (None, "") else (M.ON_DEMAND,)
        elif lt is not None:
            pool.markets = _lt_market(lt.inputs) or (M.ON_DEMAND,)
    if not pool.instance_types and not pool.requirements:
        pool.unknown.setdefault("instance_types", pool.types_from or "launchTemplate")
        pool.open.setdefault(
            "instance_types", M.Open(r.urn, "launchTemplate", "no launch template or configuration names the type")
        )
    pool.zones, pool.subnets = fleet.zones(r, "vpcZoneIdentifiers")
    pool.subnet_ids = len(inputs["vpcZoneIdentifiers"]) if isinstance(inputs.get("vpcZoneIdentifiers"), list) else 0
    if pool.zones is None and not pool.subnets:
        pool.zones = frozenset(strings(inputs.get("availabilityZones"))) or None
    pool.tags = tag_map(inputs.get("tags"))
    boot = _describe(pool, fleet, lt)
    if lc is not None:
        lc_inputs = lc.inputs
        pool.metadata_options = dict(get(lc_inputs, "metadataOptions") or {})
        pool.block_devices = _own_devices(fleet, lc)
        pool.public_ip = flag(lc_inputs.get("associatePublicIpAddress"))
        raw = lc_inputs.get("userData", lc_inputs.get("userDataBase64"))
        pool.user_data, pool.user_data_known = decode_user_data(raw), raw is None or known(raw)
        boot = parse_user_data(raw)
        pool.ami_release = text(lc_inputs.get("imageId")) or ""
    elif lt is None:
        # No template: the nodes' user data (and so their labels and taints) is not in the plan.
        boot = Bootstrap({}, [], False, True)
        pool.user_data_known = False
    _bootstrap_into(pool, boot)
    pool.warm_pool = dict(inputs["warmPool"]) if isinstance(inputs.get("warmPool"), Mapping) else None
    pool.update_strategy = dict(inputs.get("instanceRefresh") or {})
    return pool


def _overrides(
    fleet: Index, overrides: Sequence[Mapping[str, Any]], lt: Record | None
) -> tuple[list[str], list[str], dict[str, float], tuple[Mapping[str, Any], ...], str | None]:
    """(named types in order, types only requirement sets admit, weight per type, the requirement sets, where
    the first unknown type is ("2.instanceType", None when all are known)) of launch template overrides. An
    override naming no type and no requirements launches the template's type (EC2 Fleet and Auto Scaling
    semantics), as does the absence of overrides."""
    lt_type = text(get(lt.inputs, "instanceType")) if lt is not None else None
    named: list[str] = []
    weights: dict[str, float] = {}
    reqs: list[Mapping[str, Any]] = []
    unknown: str | None = None
    for i, o in enumerate(overrides):
        raw, req = o.get("instanceType"), o.get("instanceRequirements")
        itype = text(raw) if raw is not None else (lt_type if not isinstance(req, Mapping) else None)
        if unknown is None and is_unknown(raw):
            unknown = f"{i}.instanceType"
        if itype:
            named.append(itype)
            weight = number(o.get("weightedCapacity"))
            if weight is not None:
                weights[itype] = weight
        if isinstance(req, Mapping):
            reqs.append(req)
    if not overrides and lt_type:
        named.append(lt_type)
    named = list(dict.fromkeys(named))
    admitted = [t for req in reqs for t in selection.abs_types(fleet.catalog, req) if t not in named]
    return named, list(dict.fromkeys(admitted)), weights, tuple(reqs), unknown


def _choose(pool: M.Pool, named: list[str], admitted: list[str], reqs: tuple[Mapping[str, Any], ...]) -> None:
    pool.named_types = tuple(named)
    pool.instance_types = (*named, *admitted)
    pool.requirements = reqs


def instance(fleet: Index, r: Record, spot: bool = False) -> M.Pool:
    inputs = r.inputs
    path = M.SPOT_REQUEST if spot else M.INSTANCE
    pool = M.Pool(r.urn, r.name, r.type, path, types_from="instanceType", region=fleet.provider_region(r))
    lt, pool.launch_template_problem = fleet.launch_template(r, "launchTemplate", inputs.get("launchTemplate"))
    itype, source = inputs.get("instanceType"), r
    if itype is None and lt is not None:
        itype, pool.types_from, source = get(lt.inputs, "instanceType"), "launchTemplate.instanceType", lt
    if text(itype):
        pool.instance_types = (str(itype),)
    else:
        pool.unknown["instance_types"] = pool.types_from
        if is_unknown(itype):
            pool.open["instance_types"] = M.Open(source.urn, "instanceType")
        elif pool.launch_template_problem:
            pool.open["instance_types"] = M.Open(r.urn, "launchTemplate", pool.launch_template_problem)
        else:
            pool.open["instance_types"] = M.Open(source.urn, "instanceType", "no instance type is given")
    pool.counts = M.Counts(1, 1, 1)
    boot = _describe(pool, fleet, lt)
    # The instance's own market options, else (when it states none) its template's.
    holder = r if inputs.get("instanceMarketOptions") is not None or lt is None else lt
    market_type = get(holder.inputs, "instanceMarketOptions.marketType")
    market_open = unknown_at(holder.inputs, "instanceMarketOptions.marketType")
    if spot:
        pool.markets = (M.SPOT,)
    elif market_open:
        pool.unknown["markets"] = "instanceMarketOptions.marketType"
        pool.open["markets"] = M.Open(holder.urn, market_open)
    else:
        pool.markets = (_LT_MARKET.get(str(market_type), M.ON_DEMAND),)
    pool.capacity_reservations = (
        tuple(c.urn for c in fleet.referenced(r, "capacityReservationSpecification", *_RESERVATION_TYPES))
        + pool.capacity_reservations
    )
    subnet_zones, pool.subnets = fleet.zones(r, "subnetId")
    az = text(inputs.get("availabilityZone"))
    pool.zones = subnet_zones or (frozenset({az}) if az else None)
    pool.subnet_ids = 1 if inputs.get("subnetId") is not None else 0
    if isinstance(inputs.get("metadataOptions"), Mapping):
        pool.metadata_options = dict(inputs["metadataOptions"])
    own = _own_devices(fleet, r)
    if own:
        pool.block_devices = own
    public = flag(inputs.get("associatePublicIpAddress"))
    pool.public_ip = public if public is not None else pool.public_ip
    raw = inputs.get("userData", inputs.get("userDataBase64"))
    if raw is not None:
        pool.user_data, pool.user_data_known = decode_user_data(raw), known(raw)
        boot = parse_user_data(raw)
    _bootstrap_into(pool, boot)
    pool.tags = {**pool.tags, **tag_map(inputs.get("tags"))}
    pool.ami_release = text(inputs.get("ami")) or pool.ami_release
    return pool


def spot_request(fleet: Index, r: Record) -> M.Pool:
    return instance(fleet, r, spot=True)


def ec2_fleet(fleet: Index, r: Record) -> M.Pool:
    inputs = r.inputs
    pool = M.Pool(
        r.urn, r.name, r.type, M.EC2_FLEET, types_from="launchTemplateConfigs", region=fleet.provider_region(r)
    )
    tcs = obj(inputs.get("targetCapacitySpecification"))
    total, od, spot = (
        count(tcs.get("totalTargetCapacity")),
        count(tcs.get("onDemandTargetCapacity", 0)),
        count(tcs.get("spotTargetCapacity", 0)),
    )
    overrides = [o for cfg in mappings(inputs.get("launchTemplateConfigs")) for o in mappings(cfg.get("overrides"))]
    lt, pool.launch_template_problem = fleet.launch_template(r, "launchTemplateConfigs", {})
    named, admitted, weights, reqs, unknown = _overrides(fleet, overrides, lt)
    _choose(pool, named, admitted, reqs)
    if unknown is not None:
        pool.unknown["instance_types"] = "launchTemplateConfigs"
        pool.open["instance_types"] = M.Open(r.urn, "launchTemplateConfigs")
    pool.counts = M.Counts(None, total, total, weights)
    if total is None or od is None or spot is None:
        pool.unknown["counts"] = "targetCapacitySpecification"
    tcs_path = "targetCapacitySpecification"
    _open(pool, "max_size", r, f"{tcs_path}.totalTargetCapacity")
    _open(pool, "markets", r, f"{tcs_path}.onDemandTargetCapacity", f"{tcs_path}.spotTargetCapacity")
    default = text(tcs.get("defaultTargetCapacityType"))
    pool.split = M.MarketSplit(on_demand_target=od, spot_target=spot, default_market=default)
    found = {_LT_MARKET.get(default or "", M.ON_DEMAND) if default != "on-demand" else M.ON_DEMAND}
    if spot:
        found.add(M.SPOT)
    if od:
        found.add(M.ON_DEMAND)
    pool.markets = tuple(m for m in M.MARKETS if m in found)
    _bootstrap_into(pool, _describe(pool, fleet, lt))
    pool.tags = {**pool.tags, **tag_map(inputs.get("tags"))}
    return pool


def spot_fleet(fleet: Index, r: Record) -> M.Pool:
    inputs = r.inputs
    pool = M.Pool(
        r.urn, r.name, r.type, M.SPOT_FLEET, types_from="launchSpecifications", region=fleet.provider_region(r)
    )
    total, od = count(inputs.get("targetCapacity")), count(inputs.get("onDemandTargetCapacity", 0))
    specs = mappings(inputs.get("launchSpecifications"))
    overrides = [o for cfg in mappings(inputs.get("launchTemplateConfigs")) for o in mappings(cfg.get("overrides"))]
    lt, pool.launch_template_problem = fleet.launch_template(r, "launchTemplateConfigs", {})
    named, admitted, weights, reqs, unknown = _overrides(fleet, [*specs, *overrides], lt)
    _choose(pool, named, admitted, reqs)
    if unknown is not None:
        pool.unknown["instance_types"] = "launchTemplateConfigs"
        pool.open["instance_types"] = M.Open(r.urn, "launchTemplateConfigs")
    pool.counts = M.Counts(None, total, total, weights)
    if total is None or od is None:
        pool.unknown["counts"] = "targetCapacity"
    _open(pool, "max_size", r, "targetCapacity")
    _open(pool, "markets", r, "onDemandTargetCapacity")
    pool.split = M.MarketSplit(on_demand_target=od, spot_allocation=text(inputs.get("allocationStrategy")))
    pool.markets = (M.ON_DEMAND, M.SPOT) if od else (M.SPOT,)
    boot = _describe(pool, fleet, lt)
    if specs and lt is None:
        first = specs[0]
        pool.public_ip = flag(first.get("associatePublicIpAddress"))
        raw = first.get("userData")
        pool.user_data, pool.user_data_known = decode_user_data(raw), raw is None or known(raw)
        boot = parse_user_data(raw)
        root = mappings(first.get("rootBlockDevices"))
        pool.block_devices = _block_devices(
            root + mappings(first.get("ebsBlockDevices")), fleet, r, "launchSpecifications"
        )
    _bootstrap_into(pool, boot)
    pool.tags = {**pool.tags, **tag_map(inputs.get("tags"))}
    return pool


def capacity_reservation(fleet: Index, r: Record) -> M.Pool:
    inputs = r.inputs
    pool = M.Pool(r.urn, r.name, r.type, M.RESERVATION, types_from="instanceType", region=fleet.provider_region(r))
    itype, n = inputs.get("instanceType"), count(inputs.get("instanceCount"))
    if text(itype):
        pool.instance_types = (str(itype),)
    else:
        pool.unknown["instance_types"] = "instanceType"
        pool.open["instance_types"] = M.Open(r.urn, "instanceType", "" if is_unknown(itype) else "no instance type")
    if n is None:
        pool.unknown["counts"] = "instanceCount"
    _open(pool, "max_size", r, "instanceCount")
    # A reservation is billed whether instances run in it or not: its size is its desired and its ceiling.
    pool.counts = M.Counts(n, n, n)
    pool.markets = (M.ON_DEMAND,)
    az = text(inputs.get("availabilityZone"))
    pool.zones = frozenset({az}) if az else None
    pool.tags = tag_map(inputs.get("tags"))
    return pool


BUILDERS: Final = {
    T.NODE_GROUP: node_group,
    T.AUTOSCALING_GROUP: autoscaling_group,
    T.INSTANCE: instance,
    T.SPOT_INSTANCE_REQUEST: spot_request,
    T.EC2_FLEET: ec2_fleet,
    T.SPOT_FLEET_REQUEST: spot_fleet,
    T.CAPACITY_RESERVATION: capacity_reservation,
}
