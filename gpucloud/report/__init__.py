"""The plan report: recorded resources + cost + guardrail verdict, and its renderings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpucloud.plan.model import Plan
from gpucloud.report.hooks import cost_section, empty_cost, empty_policies, policy_section

SCHEMA = "gpucloud.plan/v1"
SCHEMA_FILE = Path(__file__).with_name("plan.schema.json")


def validate_report(report: Mapping[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a report breaks the documented JSON contract."""
    import jsonschema

    jsonschema.validate(report, json.loads(SCHEMA_FILE.read_text()))


def validate_combined(combined: Mapping[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a many-stack report (`plan --all --format json`) breaks its contract
    (`$defs.plans`; each stack's `report` is checked against the root, single-plan schema)."""
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.evolve(schema=schema["$defs"]["plans"]).iter_errors(combined))
    if error is not None:
        raise error


def build_report(
    plan: Plan,
    *,
    policy_config: Mapping[str, Any] | None = None,
    compare: Mapping[str, Any] | None = None,
    conformance: bool = True,
    mix_horizon: float | None = None,
) -> dict[str, Any]:
    """The JSON object design.md specifies (plus `outputs`, `warnings`, `log` and `conformance`).

    Conformance runs first: the objects it derives (rendered charts) are part of what the plan describes.
    With `mix_horizon` (months) the report also carries `mix_advice`, the capacity-mix optimum per GPU pool.
    """
    from gpucloud.conformance import run_conformance

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
    }
    if checked is not None:
        report["conformance"] = checked.to_json()
    if mix_horizon is not None:
        from gpucloud.advisor.plan_advice import mix_advice

        report["mix_advice"] = mix_advice(report["resources"], cost, mix_horizon)
    return report


def base_kubernetes_version(base: Mapping[str, Any] | None) -> str | None:
    """The control plane's minor in a base plan report (its EKS cluster's `version`), for the upgrade checks."""
    for r in (base or {}).get("resources") or []:
        if isinstance(r, Mapping) and r.get("type") == "aws:eks/cluster:Cluster":
            version = (r.get("inputs") or {}).get("version")
            if isinstance(version, str) and version.replace(".", "").isdigit():
                return ".".join(version.split(".")[:2])
    return None


__all__ = [
    "SCHEMA",
    "SCHEMA_FILE",
    "build_report",
    "empty_cost",
    "empty_policies",
    "validate_combined",
    "validate_report",
]
