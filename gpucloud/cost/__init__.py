"""Cost engine: prices the raw resources of any recorded plan into the plan JSON's `cost` section
(gpucloud/report/plan.schema.json).

`price_resources` works on plain dicts and imports no pulumi module (the policy pack calls it);
`price_plan` adapts a `gpucloud.plan.Plan`, reads the stack's `gpucloud:pricing` config (commitments), and adds
a per-resource `diff` against a base plan JSON when one is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from gpucloud.cost.diff import base_cost, cost_diff
from gpucloud.cost.engine import USAGE_BILLED, InstanceRates, price_resources
from gpucloud.cost.options import CONFIG_KEY, Commitment, PricingConfigError, PricingOptions
from gpucloud.prices.provenance import label as rate_label
from gpucloud.prices.provenance import rate_basis
from gpucloud.prices.rates import CURRENCY, HOURS_PER_MONTH

__all__ = [
    "CONFIG_KEY",
    "CURRENCY",
    "HOURS_PER_MONTH",
    "USAGE_BILLED",
    "Commitment",
    "InstanceRates",
    "PricingConfigError",
    "PricingOptions",
    "cost_diff",
    "derived_resources",
    "plan_resources",
    "price_plan",
    "price_resources",
    "rate_basis",
    "rate_label",
]


def plan_resources(plan: Any) -> list[dict[str, Any]]:
    """A Plan's records as the plain dicts `price_resources` reads (with custom and propertyDependencies)."""
    out = []
    for r in plan.resources:
        d = r.to_json()
        d["propertyDependencies"] = r.property_dependencies
        out.append(d)
    return out


def derived_resources(plan: Any) -> list[dict[str, Any]]:
    """The objects conformance rendered for the plan (charts), as resource dicts the pricer reads."""
    from gpucloud.cost.pricer import derived_resource

    return [derived_resource(d.owner, d.source, d.manifest) for d in getattr(plan, "derived", None) or []]


def options_for(config: Mapping[str, Any] | None) -> PricingOptions:
    """Pricing options from a stack's config; the region is the stack's `aws:region`."""
    options = PricingOptions.from_config((config or {}).get(CONFIG_KEY))
    region = (config or {}).get("aws:region")
    if isinstance(region, str) and region:
        options = dataclasses.replace(options, region=region)
    return options


def price_plan(plan: Any, compare: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `cost` section for `gpucloud plan`; with `compare` (a base plan JSON) also `diff`."""
    try:
        options = options_for(getattr(plan, "config", None))
    except PricingConfigError as exc:
        from gpucloud.plan.engine import PlanInputError

        where = getattr(plan, "stack_file", "") or f"stack '{getattr(plan, 'stack', '')}'"
        raise PlanInputError(f"{where}: {exc}") from None
    cost = price_resources(plan_resources(plan), options, derived=derived_resources(plan))
    if compare is not None:
        cost["diff"] = cost_diff(cost, base_cost(compare, options))
    return cost
