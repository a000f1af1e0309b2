"""A GPU pool as stack policies see it: node group or ASG joined to its launch template and subnets by URN."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource

from .base import UnknownValueError, count, get, integer, maps, text, via
from .capacity import ASG, LAUNCH_TEMPLATE, NODE_GROUP, gpus, is_accelerated, max_size, spec, type_refs
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
    # What made this pool undecidable at preview (an unknown instance type, max size, ...), raised by known().
    error: UnknownValueError | None = None

    def known(self) -> Pool:
        """The pool, or the UnknownValueError that keeps it from being judged (call inside ``deciding``)."""
        if self.error is not None:
            raise self.error
        return self

    @property
    def gpus_per_node(self) -> int:
        return max((gpus(t) for t in self.instance_types), default=0)

    @property
    def is_gpu(self) -> bool:
        return any(is_accelerated(t) for t in self.instance_types)

    @property
    def max_gpus(self) -> int:
        return (self.max_size or 0) * self.gpus_per_node

    def efa_interfaces(self) -> list[Any]:
        if self.launch_template is None:
            return []
        return [
            ni
            for ni in maps(get(self.launch_template.props, "networkInterfaces"))
            if text(get(ni, "interfaceType")) in ("efa", "efa-only")
        ]


def _launch_template(r: PolicyResource) -> PolicyResource | None:
    for prop in ("launchTemplate", "mixedInstancesPolicy"):
        found = linked(r, prop, LAUNCH_TEMPLATE)
        if found:
            return found[0]
    return None


def pools(resources: list[PolicyResource]) -> list[Pool]:
    """Node groups and ASGs with their effective instance types (the template's when the pool names none)."""
    out = []
    for r in of_type(resources, NODE_GROUP, ASG):
        lt = _launch_template(r)
        try:
            out.append(_pool(r, lt))
        except UnknownValueError as exc:
            # One pool's unknown value makes that pool undecided, never the others (policies call known()).
            out.append(Pool(resource=r, instance_types=[], max_size=None, launch_template=lt, error=exc))
    return out


def _pool(r: PolicyResource, lt: PolicyResource | None) -> Pool:
    lt_types: list[str] = []
    if lt is not None:
        with via(lt):
            lt_types = [ref.instance_type for ref in type_refs(LAUNCH_TEMPLATE, lt.props)]
    if r.resource_type == NODE_GROUP and lt_types:
        # EKS rejects instanceTypes on a node group whose launch template names the type, so the template
        # decides; in a preview the node group's instanceTypes output is unknown until EKS copies it from
        # the template, and reading it would make the pool undecided for nothing.
        types = lt_types
    else:
        types = [ref.instance_type for ref in type_refs(r.resource_type, r.props)] or lt_types
    subnet_prop = "subnetIds" if r.resource_type == NODE_GROUP else "vpcZoneIdentifiers"
    return Pool(
        resource=r,
        instance_types=types,
        max_size=max_size(r.resource_type, r.props),
        launch_template=lt,
        subnets=linked(r, subnet_prop, SUBNET),
        subnet_count=count(get(r.props, subnet_prop)),
    )


def efa_capable(instance_type: str) -> bool:
    s = spec(instance_type)
    return s is not None and s.efa_supported


def efa_max(instance_type: str) -> int:
    s = spec(instance_type)
    return s.efa_interfaces if s is not None else 0


def node_count(value: Any) -> int:
    return integer(value, 0) or 0
