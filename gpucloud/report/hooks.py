"""Where the cost engine and the policy pack plug into `gpucloud plan`.

`gpucloud.cost.price_plan(plan, compare=...)` and `gpucloud.guard.evaluate_plan(plan, policy_config=...)` are looked
up by module name, so the plan works (with empty sections of the documented shape) before either lands and a real
import error inside them is never mistaken for their absence.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from typing import Any

from gpucloud.plan.model import Plan

HOURS_PER_MONTH = 730


def empty_cost() -> dict[str, Any]:
    return {
        "currency": "USD",
        "hours_per_month": HOURS_PER_MONTH,
        "monthly": 0.0,
        "monthly_ceiling": 0.0,
        "items": [],
        "unpriced": [],
    }


def empty_policies() -> dict[str, Any]:
    return {"pack": "gpucloud-guardrails", "violations": [], "not_evaluated": [], "mandatory_violations": 0}


def _module(name: str) -> Any | None:
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def cost_section(plan: Plan, compare: Mapping[str, Any] | None = None) -> dict[str, Any]:
    module = _module("gpucloud.cost")
    if module is None or not hasattr(module, "price_plan"):
        return empty_cost()
    result: dict[str, Any] = module.price_plan(plan, compare=compare)
    return result


def policy_section(
    plan: Plan, policy_config: Mapping[str, Any] | None = None, cost: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    module = _module("gpucloud.guard")
    if module is None or not hasattr(module, "evaluate_plan"):
        return empty_policies()
    result: dict[str, Any] = module.evaluate_plan(plan, policy_config=policy_config, cost=cost)
    return result
