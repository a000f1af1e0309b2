"""A GPU pool as stack policies see it: anything that starts nodes (node group, ASG, EC2 Fleet, Spot Fleet,
instance, spot request, capacity reservation) joined to its launch template or configuration and subnets by
URN, with the instance types, size and purchase options of the one capacity reader (capacity.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource

from gpucloud.fleet import types as T

from .base import UnknownValueError, count, get, integer, maps, text, via
from .capacity import (
    ASG,
    CAPACITY_RESERVATION,
    FLEET,
    INSTANCE,
    LAUNCH_CONFIG,
    LAUNCH_TEMPLATE,
    NODE_GROUP,
    SPOT_FLEET,
    SPOT_REQUEST,
    choice_types,
    gpus,
    is_accelerated,
    markets,
    max_size,
    spec,
    spot_nodes,
)
from .stack import linked, of_type

SUBNET = T.SUBNET


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

    def known(self) -> Pool:
        """The pool, or the UnknownValueError that keeps it from being judged (call inside ``deciding``)."""
        if self.error is not None:
            raise self.error
        return self

    def known_markets(self) -> list[str]:
        """The purchase options alone: decided even when the pool's types or size are unknown (they are
        read again, so an unknown market raises inside ``deciding``)."""
        if self.error is None:
            return self.markets
        return _markets(self.resource, _source(self.resource, self.launch_template)) or ["on_demand"]

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
        r = self.resource
        # Bought only on spot (a spot node group, or a group whose template buys spot): all of it.
        if self.markets == ["spot"]:
            return self.max_gpus
        return int(spot_nodes(r.resource_type, r.props, self.max_size or 0) * self.gpus_per_node)

    def efa_interfaces(self) -> list[Any]:
        if self.launch_template is None:
            return []
        return [
            ni
            for ni in maps(get(self.launch_template.props, "networkInterfaces"))
            if text(get(ni, "interfaceType")) in ("efa", "efa-only")
        ]


_TEMPLATE_PROPS = ("launchTemplate", "mixedInstancesPolicy", "launchTemplateConfigs")
POOL_RESOURCES = (NODE_GROUP, ASG, FLEET, SPOT_FLEET, INSTANCE, SPOT_REQUEST, CAPACITY_RESERVATION)
_SUBNET_PROP = {NODE_GROUP: "subnetIds", ASG: "vpcZoneIdentifiers", INSTANCE: "subnetId", SPOT_REQUEST: "subnetId"}


def _launch_template(r: PolicyResource) -> PolicyResource | None:
    for prop in _TEMPLATE_PROPS:
        found = linked(r, prop, LAUNCH_TEMPLATE)
        if found:
            return found[0]
    return None


def pools(resources: list[PolicyResource]) -> list[Pool]:
    """Everything that starts nodes, with its effective instance types (the template's or launch
    configuration's when the pool names none) and purchase options (the template's when the pool has none)."""
    out = []
    for r in of_type(resources, *POOL_RESOURCES):
        lt = _launch_template(r)
        try:
            out.append(_pool(r, lt))
        except UnknownValueError as exc:
            # One pool's unknown value makes that pool undecided, never the others (policies call known()).
            out.append(Pool(resource=r, instance_types=[], max_size=None, launch_template=lt, error=exc))
    return out


def _source(r: PolicyResource, lt: PolicyResource | None) -> PolicyResource | None:
    """The launch template, or for an ASG without one its launch configuration."""
    if lt is None and r.resource_type == ASG:
        found = linked(r, "launchConfiguration", LAUNCH_CONFIG)
        return found[0] if found else None
    return lt


def _markets(r: PolicyResource, source: PolicyResource | None) -> list[str]:
    """The pool's purchase options (the template's or launch configuration's when the pool has none)."""
    buys = markets(r.resource_type, r.props)
    if source is not None and (not buys or (r.resource_type == INSTANCE and not get(r.props, "instanceMarketOptions"))):
        with via(source):
            buys = markets(source.resource_type, source.props) or buys
    return buys


def _pool(r: PolicyResource, lt: PolicyResource | None) -> Pool:
    source = _source(r, lt)
    source_types: list[str] = []
    if source is not None:
        with via(source):
            source_types = choice_types(source.resource_type, source.props)
    if r.resource_type == NODE_GROUP and lt is not None and source_types:
        # EKS rejects instanceTypes on a node group whose launch template names the type, so the template
        # decides; in a preview the node group's instanceTypes output is unknown until EKS copies it from
        # the template, and reading it would make the pool undecided for nothing.
        types = source_types
    else:
        types = choice_types(r.resource_type, r.props) or source_types
    buys = _markets(r, source)
    subnet_prop = _SUBNET_PROP.get(r.resource_type, "subnetIds")
    return Pool(
        resource=r,
        instance_types=types,
        max_size=max_size(r.resource_type, r.props),
        launch_template=lt,
        subnets=linked(r, subnet_prop, SUBNET),
        # An instance's one subnetId is unknown at preview whenever its subnet is created alongside; reading it
        # made every such instance undecided for every pool policy, and a single id is one zone anyway.
        subnet_count=count(get(r.props, subnet_prop)) if subnet_prop != "subnetId" else 0,
        markets=buys or ["on_demand"],
    )


def efa_capable(instance_type: str) -> bool:
    s = spec(instance_type)
    return s is not None and s.efa_supported


def efa_max(instance_type: str) -> int:
    s = spec(instance_type)
    return s.efa_interfaces if s is not None else 0


def node_count(value: Any) -> int:
    return integer(value, 0) or 0
