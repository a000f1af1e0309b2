"""Prices the raw resources of any recorded plan (engine view: camelCase inputs, unknowns as the sentinel).

Every billable path ends in a priced item, an unpriced entry with its reason, or a usage-billed entry with its
unit; types AWS does not bill are listed in `billable.FREE_TYPES` / `pricer.FREE_PREFIXES`. The pricing itself
is per family in gpucloud.cost.handlers, each handler registering itself (gpucloud.cost.pricer.prices); compute
handlers price the fleet layer's pools (gpucloud.fleet). Instance rates come from the regional price book
(gpucloud.prices.book) for the plan's region, never from another region.
Import-light on purpose (catalog, fleet + stdlib): the policy pack calls `price_resources` from a stack policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import gpucloud.cost.handlers  # noqa: F401  (registers every pricing handler)
from gpucloud.catalog import Catalog, get_catalog
from gpucloud.cost import billable
from gpucloud.cost.options import PricingOptions
from gpucloud.cost.pricer import DEFAULT_REGION, UNKNOWN, InstanceRates, Pricer, handled_types, is_free
from gpucloud.prices import rates
from gpucloud.prices.book import PriceBook
from gpucloud.prices.instance_rates import on_demand_rates

__all__ = [
    "DEFAULT_REGION",
    "UNKNOWN",
    "USAGE_BILLED",
    "InstanceRates",
    "classify",
    "on_demand_rates",
    "price_resources",
]

# Billed by use (storage, requests, data, events), so a plan cannot price them: type -> what is billed.
USAGE_BILLED: Final[dict[str, str]] = {k: reason for k, (reason, _) in billable.USAGE_BILLED.items()}


def classify(type_: str) -> str:
    """How the engine treats a resource type: priced, usage (listed with unit), billed-not-priced (listed with
    unit), free, or unclassified (listed as 'no price rule')."""
    if type_ in handled_types():
        return "priced"
    if type_ in billable.USAGE_BILLED:
        return "usage"
    if type_ in billable.BILLED_NOT_PRICED:
        return "billed-not-priced"
    if is_free(type_):
        return "free"
    return "unclassified"


def price_resources(
    resources: Sequence[Mapping[str, Any]],
    options: PricingOptions | None = None,
    catalog: Catalog | None = None,
    book: PriceBook | None = None,
    derived: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The plan JSON's `cost` object (report/plan.schema.json) for plain resource dicts (urn/type/name/inputs/
    dependencies/parent, optional custom and propertyDependencies), in engine view. Pure: no pulumi import, no
    I/O beyond the catalog. `derived`: rendered Kubernetes objects (gpucloud.cost.pricer.derived_resource), priced
    like registered ones."""
    pricer = Pricer(resources, options or PricingOptions(), catalog or get_catalog(), book, derived)
    pricer.price()
    return {
        "currency": rates.CURRENCY,
        "hours_per_month": rates.HOURS_PER_MONTH,
        "region": pricer.region,
        "as_of": pricer.as_of.isoformat(),
        "monthly": round(sum(i["monthly"] for i in pricer.items), 2),
        "monthly_ceiling": round(sum(i["monthly_ceiling"] for i in pricer.items), 2),
        # True when a resource (an unlimited Karpenter NodePool) can grow without bound: the ceiling is a floor.
        "ceiling_unbounded": bool(pricer.unbounded),
        "unbounded": pricer.unbounded,
        "items": pricer.items,
        "unpriced": pricer.unpriced,
        "warnings": pricer.warnings,
    }
