"""The plan report's contract (`gpucloud.plan/v1`, shipped as plan.schema.json); `pipeline` builds a report, and
`render` (text, markdown), `visual` (html and the diagrams) and `sarif` render one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SCHEMA = "gpucloud.plan/v1"
SCHEMA_FILE = Path(__file__).with_name("plan.schema.json")
HOURS_PER_MONTH = 730


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


def empty_cost() -> dict[str, Any]:
    """A `cost` section of the documented shape with nothing priced (for reports built without the engine)."""
    return {
        "currency": "USD",
        "hours_per_month": HOURS_PER_MONTH,
        "monthly": 0.0,
        "monthly_ceiling": 0.0,
        "items": [],
        "unpriced": [],
    }


def empty_policies() -> dict[str, Any]:
    """A `policies` section of the documented shape with nothing evaluated."""
    return {"pack": "gpucloud-guardrails", "violations": [], "not_evaluated": [], "mandatory_violations": 0}


__all__ = [
    "SCHEMA",
    "SCHEMA_FILE",
    "empty_cost",
    "empty_policies",
    "validate_combined",
    "validate_report",
]
