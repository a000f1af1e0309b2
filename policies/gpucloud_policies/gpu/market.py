"""GC-GPU-043 market-eligibility: the purchase option must exist for the instance type."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, integer, text
from ..capacity import ASG, INSTANCE, LAUNCH_TEMPLATE, NODE_GROUP, spec, type_refs

_MARKETS = {"ON_DEMAND": "on_demand", "SPOT": "spot", "CAPACITY_BLOCK": "capacity_block"}
_LABEL = {"on_demand": "On-Demand", "spot": "Spot", "capacity_block": "Capacity Blocks"}


def _markets(resource_type: str, props: Any) -> list[str]:
    if resource_type == NODE_GROUP:
        return [_MARKETS.get(text(get(props, "capacityType"), "ON_DEMAND"), "on_demand")]
    if resource_type in (LAUNCH_TEMPLATE, INSTANCE):
        market = text(get(props, "instanceMarketOptions", "marketType"))
        if not market and resource_type == LAUNCH_TEMPLATE:
            # A template without a market type takes the node group's or ASG's purchase option.
            return []
        return [{"spot": "spot", "capacity-block": "capacity_block"}.get(market, "on_demand")]
    if resource_type == ASG:
        dist = get(props, "mixedInstancesPolicy", "instancesDistribution")
        base = integer(get(dist, "onDemandBaseCapacity"), 0) or 0
        pct = integer(get(dist, "onDemandPercentageAboveBaseCapacity"), 100)
        out = []
        if base > 0 or pct is None or pct > 0:
            out.append("on_demand")
        if pct is not None and pct < 100:
            out.append("spot")
        return out
    return []


def validate(args: Any, report: Report, cfg: Config) -> None:
    markets = _markets(args.resource_type, args.props)
    for ref in type_refs(args.resource_type, args.props):
        s = spec(ref.instance_type)
        if s is None:
            continue
        for market in markets:
            if not getattr(s, market):
                sold = [_LABEL[m] for m in ("on_demand", "spot", "capacity_block") if getattr(s, m)]
                report(
                    f"{ref.path} '{ref.instance_type}' is not sold through {_LABEL[market]} (available: "
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
    resource_types=frozenset({NODE_GROUP, LAUNCH_TEMPLATE, INSTANCE, ASG}),
    validate=validate,
)
