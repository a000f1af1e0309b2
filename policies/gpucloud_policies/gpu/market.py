"""GC-GPU-043 market-eligibility: the purchase option must exist for the instance type."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity
from ..capacity import CAPACITY_RESERVATION, CAPACITY_TYPES, NODE_POOLS, choices, markets, spec

_LABEL = {"on_demand": "On-Demand", "spot": "Spot", "capacity_block": "Capacity Blocks"}


def validate(args: Any, report: Report, cfg: Config) -> None:
    buys = markets(args.resource_type, args.props)
    for c in choices(args.resource_type, args.props):
        for market in buys:
            unsold = [t for t in c.instance_types if (s := spec(t)) is not None and not getattr(s, market)]
            if c.via and unsold and len(unsold) < len(c.instance_types):
                # A requirement set launches whatever it admits that the market sells.
                continue
            for t in unsold:
                s = spec(t)
                sold = [_LABEL[m] for m in ("on_demand", "spot", "capacity_block") if getattr(s, m)]
                report(
                    f"{c.path} '{t}' is not sold through {_LABEL[market]} (available: "
                    f"{', '.join(sold) or 'none'}); the launch would fail. Fix: change the purchase option or type."
                )


GUARDRAIL = Guardrail(
    id="GC-GPU-043",
    name="market-eligibility",
    description="The purchase option (On-Demand, Spot, Capacity Block) must be offered for the instance type.",
    category="gpu",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Use a purchase option the catalog lists for the type (e.g. p5e.48xlarge and trn2.48xlarge "
    "have no On-Demand SKU; buy a Capacity Block), or choose another type.",
    references=("AWS Capacity Blocks supported instance types",),
    kind="resource",
    resource_types=CAPACITY_TYPES - NODE_POOLS - {CAPACITY_RESERVATION},
    surfaces=frozenset({"compute"}),
    validate=validate,
)
