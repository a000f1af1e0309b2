"""The report pipeline: a recorded plan through conformance, the cost engine, the guardrail pack and the
capacity-mix advisor into the `gpucloud.plan/v1` object that every renderer (text, markdown, html, SARIF) reads.

Each stage is imported directly, so the import graph shows what a plan runs (scripts/layers.py checks it); the
capacity-mix advisor where it is asked for, since a report without advice (`--no-mix-advice`, the corpus, the
Checkov comparison) need not load it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpucloud.conformance import run_conformance
from gpucloud.cost import price_plan
from gpucloud.fleet import types as T
from gpucloud.guard import evaluate_plan
from gpucloud.impact import change_impact
from gpucloud.plan.model import Plan
from gpucloud.report import SCHEMA


def cost_section(plan: Plan, compare: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's `cost` object (with `compare`, a base report's, the diff against it)."""
    result: dict[str, Any] = price_plan(plan, compare=compare)
    return result


def policy_section(
    plan: Plan, policy_config: Mapping[str, Any] | None = None, cost: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The report's `policies` object: the guardrail pack's verdict, with the priced plan handed to the policies."""
    result: dict[str, Any] = evaluate_plan(plan, policy_config=policy_config, cost=cost)
    return result


def build_report(
    plan: Plan,
    *,
    policy_config: Mapping[str, Any] | None = None,
    compare: Mapping[str, Any] | None = None,
    conformance: bool = True,
    mix_horizon: float | None = None,
    include_estimates: bool = False,
) -> dict[str, Any]:
    """The `gpucloud.plan/v1` object (plus `outputs`, `warnings`, `log` and `conformance`).

    Conformance runs first: the objects it derives (rendered charts) are part of what the plan describes.
    With `mix_horizon` (months) the report also carries `mix_advice`, the capacity-mix optimum per GPU pool; its
    savings use published or refreshed rates only unless `include_estimates` (then estimate-based advice is marked).
    """
    checked = run_conformance(plan, base_kubernetes_version=base_kubernetes_version(compare)) if conformance else None
    if checked is not None:
        plan.derived = list(checked.derived)
    cost = cost_section(plan, compare=compare)
    policies = policy_section(plan, policy_config=policy_config, cost=cost)
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "project": plan.project,
        "stack": plan.stack,
        "resources": [r.to_json() for r in plan.resources],
        "cost": cost,
        "policies": policies,
        "outputs": plan.outputs,
        "warnings": list(plan.warnings),
        "log": [dict(e) for e in plan.log],
        "opaque_components": [dict(o) for o in plan.opaque],
    }
    if checked is not None:
        report["conformance"] = checked.to_json()
    if compare is not None:
        # What the change does beside its cost: replaces, drained GPU nodes, data replaced (docs/change-impact.md).
        report["change_impact"] = change_impact(compare, report["resources"], plan.config)
    if mix_horizon is not None:
        from gpucloud.advisor.plan_advice import mix_advice

        report["mix_advice"] = mix_advice(report["resources"], cost, mix_horizon, include_estimates=include_estimates)
    return report


def base_kubernetes_version(base: Mapping[str, Any] | None) -> str | None:
    """The control plane's minor in a base plan report (its EKS cluster's `version`), for the upgrade checks."""
    for r in (base or {}).get("resources") or []:
        if isinstance(r, Mapping) and r.get("type") == T.EKS_CLUSTER:
            version = (r.get("inputs") or {}).get("version")
            if isinstance(version, str) and version.replace(".", "").isdigit():
                return ".".join(version.split(".")[:2])
    return None
