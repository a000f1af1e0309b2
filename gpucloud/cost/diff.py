"""Cost change between a base plan (a `gpucloud plan --format json` object) and the current cost section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpucloud.cost.engine import price_resources
from gpucloud.cost.options import PricingOptions


def base_cost(base: Mapping[str, Any], options: PricingOptions | None = None) -> Mapping[str, Any]:
    """The base plan's cost, repriced from its resources with today's rates so the diff shows what the change
    does, not price-table updates; a base without resources falls back to its recorded cost section."""
    resources = base.get("resources")
    if isinstance(resources, list) and resources:
        return price_resources(resources, options)
    cost = base.get("cost")
    return cost if isinstance(cost, Mapping) else {"items": [], "monthly": 0.0, "monthly_ceiling": 0.0}


def _per_resource(items: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        urn = str(item.get("urn"))
        entry = out.setdefault(
            urn,
            {
                "name": urn.rsplit("::", 1)[-1],
                "type": item.get("type"),
                "monthly": 0.0,
                "monthly_ceiling": 0.0,
                "lines": [],
            },
        )
        entry["monthly"] += float(item.get("monthly", 0.0))
        entry["monthly_ceiling"] += float(item.get("monthly_ceiling", 0.0))
        entry["lines"].append(
            (
                item.get("pricing"),
                item.get("instance_type"),
                item.get("quantity"),
                item.get("max_quantity"),
                item.get("unit_price"),
            )
        )
    return out


def cost_diff(current: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """Per resource (by URN) and in total: added / removed / changed, with monthly and ceiling deltas."""
    now = _per_resource(current.get("items") or [])
    before = _per_resource(base.get("items") or [])
    items: list[dict[str, Any]] = []
    for urn in list(now) + [u for u in before if u not in now]:
        a, b = now.get(urn), before.get(urn)
        if a is not None and b is not None:
            if sorted(map(repr, a["lines"])) == sorted(map(repr, b["lines"])):
                continue
            change = "changed"
        else:
            change = "added" if b is None else "removed"
        ref = a or b
        assert ref is not None
        monthly_now = a["monthly"] if a else 0.0
        monthly_before = b["monthly"] if b else 0.0
        ceiling_now = a["monthly_ceiling"] if a else 0.0
        ceiling_before = b["monthly_ceiling"] if b else 0.0
        items.append(
            {
                "urn": urn,
                "name": ref["name"],
                "type": ref["type"],
                "change": change,
                "base_monthly": round(monthly_before, 2),
                "monthly": round(monthly_now, 2),
                "monthly_delta": round(monthly_now - monthly_before, 2),
                "monthly_ceiling_delta": round(ceiling_now - ceiling_before, 2),
            }
        )
    base_monthly = float(base.get("monthly", 0.0))
    base_ceiling = float(base.get("monthly_ceiling", 0.0))
    return {
        "base_monthly": round(base_monthly, 2),
        "base_monthly_ceiling": round(base_ceiling, 2),
        "monthly_delta": round(float(current.get("monthly", 0.0)) - base_monthly, 2),
        "monthly_ceiling_delta": round(float(current.get("monthly_ceiling", 0.0)) - base_ceiling, 2),
        "items": items,
    }
