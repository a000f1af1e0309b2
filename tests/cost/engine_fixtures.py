"""Shared builders for the cost-engine tests: plan resources as the engine reads them, and the shipped snapshot's
figures that expected values are worked out from."""

from __future__ import annotations

import json
from datetime import date
from importlib import resources
from typing import Any

from gpucloud.catalog import get_catalog
from gpucloud.cost import PricingOptions

STACK = "urn:pulumi:test::proj::pulumi:pulumi:Stack"
US = PricingOptions(region="us-east-1", as_of=date(2026, 8, 1))
SNAP: dict[str, Any] = json.loads(resources.files("gpucloud.prices").joinpath("snapshot.json").read_text())


def od(itype: str, region: str = "us-east-1") -> float:
    """The snapshot's On-Demand $/h of a type in a region."""
    usd: float = SNAP["regions"][region][itype]["on_demand"]["usd"]
    return usd


def spot_estimate(itype: str) -> float:
    """The family spot estimate: On-Demand less the catalog family's spot discount, to six decimals."""
    return round(od(itype) * (1 - get_catalog().family_pricing(itype).spot_discount), 6)


def res(type_: str, name: str, inputs: Any, deps: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """A custom resource record with its property dependencies (URNs per input)."""
    prop_deps = deps or {}
    return {
        "urn": f"{STACK}${type_}::{name}",
        "type": type_,
        "name": name,
        "custom": True,
        "dependencies": sorted({u for us in prop_deps.values() for u in us}),
        "propertyDependencies": prop_deps,
        "inputs": inputs,
    }


NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def nodepool(
    name: str,
    requirements: Any,
    limits: Any = None,
    replicas: Any = None,
    annotations: Any = None,
    type_: str = NODEPOOL,
) -> dict[str, Any]:
    """A Karpenter NodePool resource with these template requirements and, when given, limits / replicas /
    metadata annotations."""
    spec: dict[str, Any] = {"template": {"spec": {"requirements": requirements}}}
    if limits is not None:
        spec["limits"] = limits
    if replicas is not None:
        spec["replicas"] = replicas
    metadata: dict[str, Any] = {"name": name}
    if annotations is not None:
        metadata["annotations"] = annotations
    return res(type_, name, {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": metadata, "spec": spec})


def types_in(*names: str) -> dict[str, Any]:
    return {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(names)}


def capacity(*markets: str) -> dict[str, Any]:
    return {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(markets)}
