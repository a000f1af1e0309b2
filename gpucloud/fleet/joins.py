"""Joins between a plan's resources, by URN (ids are unknown at preview): templates, subnets, providers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpucloud.catalog import Catalog, get_catalog
from gpucloud.fleet import types as T
from gpucloud.fleet.values import (
    get,
    is_unknown,
    known,
    text,
)


@dataclass(frozen=True)
class Record:
    """One resource as the fleet layer reads it (a gpucloud.plan.model.ResourceRecord or a resource dict)."""

    urn: str
    type: str
    name: str
    inputs: Mapping[str, Any]
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    provider: str | None = None


def record(resource: Any) -> Record:
    if isinstance(resource, Record):
        return resource
    if isinstance(resource, Mapping):
        deps = resource.get("propertyDependencies") or resource.get("property_dependencies") or {}
        inputs = resource.get("inputs")
        return Record(
            urn=str(resource.get("urn")),
            type=str(resource.get("type", "")),
            name=str(resource.get("name")),
            inputs=inputs if isinstance(inputs, Mapping) else {},
            dependencies=tuple(str(d) for d in resource.get("dependencies") or ()),
            property_dependencies={str(k): tuple(v or ()) for k, v in deps.items()}
            if isinstance(deps, Mapping)
            else {},
            provider=resource.get("provider") if isinstance(resource.get("provider"), str) else None,
        )
    return Record(
        urn=resource.urn,
        type=resource.type,
        name=resource.name,
        inputs=resource.inputs if isinstance(resource.inputs, Mapping) else {},
        dependencies=tuple(resource.dependencies or ()),
        property_dependencies={k: tuple(v) for k, v in (resource.property_dependencies or {}).items()},
        provider=resource.provider,
    )


class Index:
    """A plan's resources indexed for the joins."""

    def __init__(
        self,
        resources: Iterable[Any],
        objects: Iterable[Mapping[str, Any]] = (),
        *,
        region: str | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        self.records = [record(r) for r in resources]
        self.by_urn = {r.urn: r for r in self.records}
        self.catalog = catalog or get_catalog()
        # Kubernetes objects the plan implies without registering them (rendered charts), as manifests.
        self.objects = list(objects)
        self.region = region if region is not None else plan_region(self.records)

    # ---- references between resources -------------------------------------------------------------------
    def referenced(self, r: Record, prop: str, *types: str) -> list[Record]:
        """Resources of ``types`` that ``prop`` of ``r`` depends on; the plain dependencies when the record
        carries no property dependencies at all."""
        urns = list(r.property_dependencies.get(prop) or ())
        found = [self.by_urn[u] for u in urns if u in self.by_urn and self.by_urn[u].type in types]
        if found or r.property_dependencies:
            return found
        return [self.by_urn[u] for u in r.dependencies if u in self.by_urn and self.by_urn[u].type in types]

    def launch_template(self, r: Record, prop: str, spec: Any) -> tuple[Record | None, str | None]:
        """The in-plan launch template ``spec`` ({id|name|launchTemplateId|launchTemplateName}) points at, or
        why there is none."""
        candidates = self.referenced(r, prop, T.LAUNCH_TEMPLATE)
        if len(candidates) == 1:
            # The property depends on exactly one template: that is the one, whatever shape the spec has in
            # this view (a stack policy may see the whole block unknown, or only the dependency).
            return candidates[0], None
        if not isinstance(spec, Mapping):
            return None, None
        name = spec.get("name", spec.get("launchTemplateName"))
        if isinstance(name, str) and not is_unknown(name):
            for c in self.records:
                if c.type == T.LAUNCH_TEMPLATE and name in (c.inputs.get("name"), c.name):
                    return c, None
            return None, f"launch template {name!r} is not in this program, so its instance type is unknown"
        ident = spec.get("id", spec.get("launchTemplateId"))
        if isinstance(ident, str) and not is_unknown(ident):
            return None, f"launch template {ident} is not in this program, so its instance type is unknown"
        if len(candidates) > 1:
            return None, "the launch template is ambiguous (several in its dependencies)"
        return None, "the launch template could not be matched to a resource in this program"

    def zones(self, r: Record, prop: str) -> tuple[frozenset[str] | None, tuple[str, ...]]:
        """(zones of the subnets ``prop`` names, their URNs); zones None when one is unknown or none is joined."""
        subnets = self.referenced(r, prop, T.SUBNET)
        found: set[str] = set()
        for s in subnets:
            az = s.inputs.get("availabilityZone")
            if not known(az):
                return None, tuple(s.urn for s in subnets)
            found.add(str(az))
        return (frozenset(found) or None), tuple(s.urn for s in subnets)

    def provider_region(self, r: Record) -> str | None:
        """The region of the AWS provider the resource names, else the plan's."""
        if r.provider:
            urn = r.provider.rsplit("::", 1)[0] if r.provider.count("::") > 3 else r.provider
            provider = self.by_urn.get(urn)
            if provider is not None and provider.type == T.AWS_PROVIDER:
                region = text(provider.inputs.get("region"))
                if region:
                    return region
        return self.region


def _object_record(obj: Mapping[str, Any], index: int) -> Record:
    urn = str(obj.get("urn") or f"object:{obj.get('kind')}/{get(obj, 'metadata.name')}#{index}")
    return Record(urn=urn, type=f"object:{obj.get('kind')}", name=str(get(obj, "metadata.name") or urn), inputs=obj)


def plan_region(records: Sequence[Record]) -> str | None:
    """The region of the plan's default AWS provider (named default*), else of the only explicit AWS provider's
    region; None when the plan does not say."""
    regions: dict[str, str] = {}
    for r in records:
        if r.type == T.AWS_PROVIDER:
            region = text(r.inputs.get("region"))
            if region:
                regions[r.name] = region
    for name, region in regions.items():
        if name.startswith("default"):
            return region
    distinct = set(regions.values())
    return distinct.pop() if len(distinct) == 1 else None
