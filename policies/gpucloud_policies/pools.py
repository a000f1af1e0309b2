"""A GPU pool as stack policies see it: anything that starts nodes (node group, ASG, EC2 Fleet, Spot Fleet,
instance, spot request, capacity reservation) joined to its launch template or configuration and subnets by
URN, with the instance types, size and purchase options of the one capacity reader (capacity.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource

from .base import count, get, integer, maps, text
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

SUBNET = "aws:ec2/subnet:Subnet"


@dataclass
class Pool:
    resource: PolicyResource
    instance_types: list[str]
    max_size: int | None
    launch_template: PolicyResource | None
    subnets: list[PolicyResource] = field(default_factory=list)
    subnet_count: int = 0
    markets: list[str] = field(default_factory=list)

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
    return [_pool(r) for r in of_type(resources, *POOL_RESOURCES)]


def _pool(r: PolicyResource) -> Pool:
    lt = _launch_template(r)
    types = choice_types(r.resource_type, r.props)
    buys = markets(r.resource_type, r.props)
    source = lt
    if source is None and r.resource_type == ASG:
        found = linked(r, "launchConfiguration", LAUNCH_CONFIG)
        source = found[0] if found else None
    if source is not None:
        if not types:
            types = choice_types(source.resource_type, source.props)
        if not buys or (r.resource_type == INSTANCE and not get(r.props, "instanceMarketOptions")):
            buys = markets(source.resource_type, source.props) or buys
    subnet_prop = _SUBNET_PROP.get(r.resource_type, "subnetIds")
    return Pool(
        resource=r,
        instance_types=types,
        max_size=max_size(r.resource_type, r.props),
        launch_template=lt,
        subnets=linked(r, subnet_prop, SUBNET),
        subnet_count=count(get(r.props, subnet_prop)),
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
