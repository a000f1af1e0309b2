"""A GPU pool as stack policies see it: the fleet layer's one model of the plan (gpucloud.fleet), every launch
path joined (node group, ASG, EC2 Fleet, Spot Fleet, instance, spot request, capacity reservation, to its launch
template or configuration by URN or by the template's literal name, and to its subnets), with the GPU facts of
the catalog. Where a value a pool policy needs is unknown at preview, the pool carries the fleet's record of it
(``Pool.open``: the resource it was read from and the input path), so the finding names ``<template>.field``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from gpucloud import fleet as F
from gpucloud.fleet import model as M
from gpucloud.fleet import types as T

from .base import UnknownValueError, get, integer, maps, plain, text
from .capacity import (
    ASG,
    CAPACITY_RESERVATION,
    FLEET,
    INSTANCE,
    NODE_GROUP,
    SPOT_FLEET,
    SPOT_REQUEST,
    gpus,
    is_accelerated,
    spec,
)

SUBNET = T.SUBNET
# The fleet's market names in the pack's spelling (capacity.markets); Karpenter's "reserved" is a block here.
_MARKET = {M.ON_DEMAND: "on_demand", M.SPOT: "spot", M.CAPACITY_BLOCK: "capacity_block", M.RESERVED: "capacity_block"}
# What a pool policy needs decided, in the order a finding names the first open one.
_NEEDED = ("instance_types", "markets", "max_size", "subnet_ids")


@dataclass
class Pool:
    resource: PolicyResource
    instance_types: list[str]
    max_size: int | None
    launch_template: PolicyResource | None
    subnets: list[PolicyResource] = field(default_factory=list)
    subnet_count: int = 0
    markets: list[str] = field(default_factory=list)
    # What made this pool undecidable at preview (an unknown instance type, max size, ...), raised by known().
    error: UnknownValueError | None = None
    # The fleet's pool, for what the fields above do not carry (market split, counts, where values are open).
    model: M.Pool | None = field(default=None, repr=False)
    # The purchase options on their own, and what keeps them open (known_markets).
    pool_markets: list[str] = field(default_factory=list)
    market_error: UnknownValueError | None = None

    def known(self) -> Pool:
        """The pool, or the UnknownValueError that keeps it from being judged (call inside ``deciding``)."""
        if self.error is not None:
            raise self.error
        return self

    def known_markets(self) -> list[str]:
        """The purchase options alone: decided even when the pool's types or size are unknown (an unknown
        market raises inside ``deciding``)."""
        if self.market_error is not None:
            raise self.market_error
        return self.pool_markets

    @property
    def gpus_per_node(self) -> int:
        return max((gpus(t) for t in self.instance_types), default=0)

    @property
    def is_gpu(self) -> bool:
        return any(is_accelerated(t) for t in self.instance_types)

    @property
    def max_gpus(self) -> int:
        return (self.max_size or 0) * self.gpus_per_node

    @property
    def spot_gpus(self) -> int:
        # Bought only on spot (a spot node group, or a group whose template buys spot): all of it.
        if self.markets == ["spot"]:
            return self.max_gpus
        return int(_spot_nodes(self.model, self.max_size or 0) * self.gpus_per_node)

    def efa_interfaces(self) -> list[Any]:
        if self.launch_template is None:
            return []
        return [
            ni
            for ni in maps(get(self.launch_template.props, "networkInterfaces"))
            if text(get(ni, "interfaceType")) in ("efa", "efa-only")
        ]


POOL_RESOURCES = (NODE_GROUP, ASG, FLEET, SPOT_FLEET, INSTANCE, SPOT_REQUEST, CAPACITY_RESERVATION)


def _spot_nodes(pool: M.Pool | None, nodes: int) -> float:
    """How many of ``nodes`` (at maximum size) are bought on spot, from the fleet's market split."""
    split = pool.split if pool is not None else None
    if pool is None or split is None:
        return 0
    if pool.type == ASG:
        return max(0, nodes - split.on_demand_base) * (100 - split.on_demand_percentage) / 100
    if pool.type == FLEET:
        if split.default_market == M.SPOT:
            return max(0, nodes - (split.on_demand_target or 0))
        return min(nodes, split.spot_target or 0)
    if pool.type == SPOT_FLEET:
        return max(0, nodes - (split.on_demand_target or 0))
    return 0


def _record(r: PolicyResource) -> F.Record:
    """A stack policy's resource as the fleet reads it: plain inputs (unknown sentinels kept), joins by URN."""
    props = plain(r.props)
    return F.Record(
        urn=r.urn,
        type=r.resource_type,
        name=r.name,
        inputs=props if isinstance(props, dict) else {},
        dependencies=tuple(d.urn for d in r.dependencies or ()),
        property_dependencies={k: tuple(d.urn for d in v or ()) for k, v in (r.property_dependencies or {}).items()},
    )


def _error(opened: M.Open, by_urn: dict[str, PolicyResource], own: str) -> UnknownValueError:
    """The unknown as the proxy would raise it, under the name of the resource it was read from (``via``)."""
    props = opened.path.split(".")
    source = by_urn.get(opened.source)
    if opened.source != own and source is not None:
        props = [source.name, *props]
    exc = UnknownValueError(UNKNOWN_STRING_VALUE, props)
    if opened.reason:
        exc.message = opened.reason
    return exc


def pools(resources: list[PolicyResource]) -> list[Pool]:
    """Everything that starts nodes, as the fleet layer reads it: effective instance types (the template's or
    launch configuration's when the pool names none), maximum size and purchase options (the template's when
    the pool has none); a pool with an open value carries its error, raised by known() / known_markets()."""
    # A dozen stack policies ask for the pools of the same plan: read the fleet once per resource list.
    key = (id(resources), len(resources))
    hit = _POOLS.get(key)
    if hit is not None and hit[0] is resources:
        return list(hit[1])
    found = _pools(resources)
    _POOLS.clear()
    _POOLS[key] = (resources, found)
    return list(found)


_POOLS: dict[tuple[int, int], tuple[list[PolicyResource], list[Pool]]] = {}


def _pools(resources: list[PolicyResource]) -> list[Pool]:
    by_urn = {r.urn: r for r in resources}
    fleet = F.Fleet([_record(r) for r in resources])
    out = []
    for p in fleet.pools():
        r = by_urn.get(p.urn)
        if r is None or p.type not in POOL_RESOURCES:
            continue
        opened = dict(p.open)
        for key, path in p.unknown.items():
            if key in ("instance_types", "markets"):
                opened.setdefault(key, M.Open(p.urn, path))
        errors = {k: _error(opened[k], by_urn, p.urn) for k in _NEEDED if k in opened}
        error = next(iter(errors.values()), None)
        lt = by_urn.get(p.launch_template) if p.launch_template else None
        markets = sorted({_MARKET.get(m, "on_demand") for m in p.markets}) or ["on_demand"]
        out.append(
            Pool(
                resource=r,
                # One pool's unknown value makes that pool undecided, never the others (policies call known()).
                instance_types=list(p.instance_types) if error is None else [],
                max_size=p.counts.max if error is None else None,
                launch_template=lt,
                subnets=[by_urn[u] for u in p.subnets if u in by_urn],
                subnet_count=p.subnet_ids if r.resource_type not in (INSTANCE, SPOT_REQUEST) else 0,
                markets=markets if error is None else [],
                error=error,
                model=p,
                pool_markets=markets,
                market_error=errors.get("markets"),
            )
        )
    return out


def efa_capable(instance_type: str) -> bool:
    s = spec(instance_type)
    return s is not None and s.efa_supported


def efa_max(instance_type: str) -> int:
    s = spec(instance_type)
    return s.efa_interfaces if s is not None else 0


def node_count(value: Any) -> int:
    return integer(value, 0) or 0
