"""GC-COST-033 monthly-spend-cap: per-pool and per-stack monthly ceilings from the cost engine.

Prices come from gpucloud's cost engine, never from AWS at policy time: offline, ``gpucloud plan`` hands the
cost section it already computed to the pack (``PACK.policies(cost=...)``, which binds it with ``make_validate``);
inside the Pulumi CLI the policy prices the stack's resources itself with the pure
``gpucloud.cost.price_resources`` (imported directly: the cost engine ships in the same package as the pack).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, mark_undecided, number, plain


def _price(resources: list[Any]) -> Mapping[str, Any]:
    # Imported on first use: evaluating the pack without a spend cap set does not load the cost engine.
    from gpucloud.cost import price_resources

    # Links by URN as the engine hands them over: without them a node group cannot be matched to its launch
    # template (whose ID is unknown at preview), and its price would be unknown under `pulumi preview` only.
    plain_resources = [
        {
            "urn": r.urn,
            "type": r.resource_type,
            "name": r.name,
            "inputs": plain(r.props),
            "parent": r.parent.urn if r.parent is not None else None,
            "dependencies": [d.urn for d in r.dependencies or []],
            "propertyDependencies": {k: [d.urn for d in v] for k, v in (r.property_dependencies or {}).items()},
        }
        for r in resources
    ]
    result: Mapping[str, Any] = price_resources(plain_resources)
    return result


_FIELDS = re.compile(
    r"\b(?:scalingConfig\.\w+|instanceTypes?|desiredCapacity|minSize|maxSize|capacityType|"
    r"instancesDistribution|launchTemplate)\b"
)


_LEADING = re.compile(r"[a-z][A-Za-z]*(?:\.[A-Za-z]+)*(?= (?:is|are) unknown)")


def _field(reason: str) -> str:
    """The input the cost engine names in its reason (it reports prose, not paths); "price" when none."""
    found = _FIELDS.search(reason) or _LEADING.match(reason)
    return found.group(0) if found else "price"


POOL_COMPONENT = "gpucloud:nodepool:GpuNodePool"


def _pool_ceilings(resources: list[Any], cost: Mapping[str, Any]) -> dict[str, float]:
    """Monthly ceiling per pool: a gpucloud pool's node groups, launch-template volumes and ASG add up under
    its GpuNodePool component; a resource of any other program is its own pool."""
    by_urn = {r.urn: r for r in resources}
    totals: dict[str, float] = {}
    for item in cost.get("items") or []:
        urn = str(item.get("urn") or "")
        owner, node = urn, by_urn.get(urn)
        while node is not None:
            if node.resource_type == POOL_COMPONENT:
                owner = node.urn
                break
            node = node.parent
        totals[owner] = totals.get(owner, 0.0) + (number(item.get("monthly_ceiling"), 0) or 0.0)
    return totals


def make_validate(priced: Mapping[str, Any] | None) -> Callable[[Any, StackReport, Config], None]:
    """The check against a priced plan (the report's ``cost`` section), or pricing the resources when None."""

    def validate(args: Any, report: StackReport, cfg: Config) -> None:
        check(args, report, cfg, priced)

    return validate


def check(args: Any, report: StackReport, cfg: Config, priced: Mapping[str, Any] | None) -> None:
    stack_cap = number(cfg["maxMonthlyUsd"], 0) or 0
    pool_cap = number(cfg["maxPoolMonthlyUsd"], 0) or 0
    delta_cap = number(cfg["maxMonthlyDeltaUsd"], 0) or 0
    if not (stack_cap or pool_cap or delta_cap):
        return
    cost = priced if priced is not None else _price(list(args.resources))
    # A resource the cost engine could not price because a value is unknown at preview (instance type, size)
    # may be the one that breaks the cap: it is undecided, never counted as $0. Usage-billed ones are not.
    for item in cost.get("unpriced") or []:
        reason = str(item.get("reason") or "") if isinstance(item, Mapping) else ""
        if "unknown" in reason:
            mark_undecided(str(item.get("urn") or ""), _field(reason), reason)
    if pool_cap:
        for urn, ceiling in _pool_ceilings(list(args.resources), cost).items():
            if ceiling > pool_cap:
                report(
                    urn,
                    f"costs up to ${ceiling:,.0f}/month at maximum size, above the "
                    f"per-pool ceiling ${pool_cap:,.0f}. Fix: lower its max size or use cheaper capacity.",
                )
    ceiling = number(cost.get("monthly_ceiling"), 0) or 0
    if stack_cap and ceiling > stack_cap:
        report(
            "",
            f"the stack costs up to ${ceiling:,.0f}/month at maximum sizes, above maxMonthlyUsd "
            f"${stack_cap:,.0f}. Fix: lower pool max sizes or raise the cap through a reviewed config change.",
        )
    diff = cost.get("diff")
    if delta_cap and isinstance(diff, Mapping):
        delta = number(diff.get("monthly_ceiling_delta"), 0) or 0
        if delta > delta_cap:
            report(
                "",
                f"this change raises the monthly ceiling by ${delta:,.0f}, above maxMonthlyDeltaUsd "
                f"${delta_cap:,.0f}. Fix: split the change or get the cap raised.",
            )


GUARDRAIL = Guardrail(
    id="GC-COST-033",
    name="monthly-spend-cap",
    description="Monthly cost at maximum size must stay under the per-pool and per-stack ceilings.",
    category="cost",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Lower max sizes, move capacity to spot, or raise maxMonthlyUsd / maxPoolMonthlyUsd through "
    "a reviewed config change. Capacity Block fees count in full.",
    references=("HCP Terraform Sentinel cost_estimation",),
    kind="stack",
    surfaces=frozenset({"compute"}),
    reads=frozenset(
        {
            "aws:eks/nodeGroup:NodeGroup",
            "aws:autoscaling/group:Group",
            "aws:ec2/fleet:Fleet",
            "aws:ec2/spotFleetRequest:SpotFleetRequest",
            "aws:ec2/instance:Instance",
            "aws:ec2/spotInstanceRequest:SpotInstanceRequest",
            "aws:ec2/capacityReservation:CapacityReservation",
            "kubernetes:karpenter.sh/v1:NodePool",
            "kubernetes:karpenter.sh/v1beta1:NodePool",
            POOL_COMPONENT,
        }
    ),
    validate=make_validate(None),
    bind_cost=make_validate,
    config={
        "maxMonthlyUsd": {
            "type": "number",
            "minimum": 0,
            "default": 0,
            "description": "Ceiling for the stack's monthly cost at maximum sizes (USD); 0 turns it off.",
        },
        "maxPoolMonthlyUsd": {
            "type": "number",
            "minimum": 0,
            "default": 0,
            "description": "Ceiling for one resource's monthly cost at maximum size (USD); 0 turns it off.",
        },
        "maxMonthlyDeltaUsd": {
            "type": "number",
            "minimum": 0,
            "default": 0,
            "description": "Largest rise of the monthly ceiling one change may bring (needs --compare); 0 turns "
            "it off.",
        },
    },
)
