"""Helpers for stack policies: relationships by URN (never by ID, which is unknown at preview)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pulumi_policy import PolicyResource

from .base import get, strings, text


def of_type(resources: Iterable[PolicyResource], *types: str) -> list[PolicyResource]:
    return [r for r in resources if r.resource_type in types]


def linked(r: PolicyResource, prop: str, *types: str) -> list[PolicyResource]:
    """Resources of ``types`` that ``r``'s property ``prop`` depends on (propertyDependencies, by URN)."""
    deps = (r.property_dependencies or {}).get(prop) or []
    return [d for d in deps if not types or d.resource_type in types]


def depends_on(r: PolicyResource, target: PolicyResource, prop: str | None = None) -> bool:
    if prop is not None:
        return any(d.urn == target.urn for d in (r.property_dependencies or {}).get(prop) or [])
    return any(d.urn == target.urn for d in r.dependencies or [])


def subnet_azs(subnets: list[PolicyResource]) -> set[str]:
    """Availability zones of subnet resources; an unknown AZ raises (the subnet may land anywhere)."""
    azs = set()
    for s in subnets:
        az = text(get(s.props, "availabilityZone")) or text(get(s.props, "availabilityZoneId"))
        if az:
            azs.add(az)
    return azs


def literal_refs(props: Any, prop: str) -> list[str]:
    return strings(get(props, prop))
