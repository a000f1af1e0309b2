"""GC-COST-039 reserved-capacity-discipline: Capacity Blocks and targeted reservations only where allowed.

Idle reservations bill in full, so using one is a deliberate, per-environment decision with the reservation
IDs listed in config.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, maps, text
from ..capacity import LAUNCH_TEMPLATE, NODE_CLASS, NODE_GROUP


def _reservation_ids(rt: str, props: Any) -> list[tuple[str, str]]:
    if rt == LAUNCH_TEMPLATE:
        rid = text(get(props, "capacityReservationSpecification", "capacityReservationTarget", "capacityReservationId"))
        return [("capacityReservationSpecification.capacityReservationTarget", rid)] if rid else []
    if rt == NODE_CLASS:
        return [
            (f"spec.capacityReservationSelectorTerms[{i}]", text(get(term, "id")))
            for i, term in enumerate(maps(get(props, "spec", "capacityReservationSelectorTerms")))
        ]
    return []


def validate(args: Any, report: Report, cfg: Config) -> None:
    rt, props = args.resource_type, args.props
    blocks = bool(cfg["allowCapacityBlocks"])
    reservations = bool(cfg["allowCapacityReservations"])
    allowed_ids = set(cfg["allowedReservationIds"])
    if not blocks:
        if rt == NODE_GROUP and text(get(props, "capacityType")) == "CAPACITY_BLOCK":
            report(
                "capacityType CAPACITY_BLOCK is not allowed in this environment. Fix: use ON_DEMAND/SPOT, or "
                "set allowCapacityBlocks with the block's reservation ID in allowedReservationIds."
            )
        if rt == LAUNCH_TEMPLATE and text(get(props, "instanceMarketOptions", "marketType")) == "capacity-block":
            report(
                "instanceMarketOptions.marketType capacity-block is not allowed in this environment. Fix: remove "
                "it, or set allowCapacityBlocks in this environment's policy config."
            )
    for where, rid in _reservation_ids(rt, props):
        if not reservations and not blocks:
            report(
                f"{where} targets a capacity reservation, which this environment does not allow. Fix: remove "
                "it or set allowCapacityReservations."
            )
        elif allowed_ids and rid not in allowed_ids:
            report(
                f"{where} targets reservation '{rid or '(selected by tags)'}', not in allowedReservationIds "
                f"{sorted(allowed_ids)}. Fix: list the reservation ID in the policy config."
            )


GUARDRAIL = Guardrail(
    id="GC-COST-039",
    name="reserved-capacity-discipline",
    description="Capacity Blocks and targeted capacity reservations only where the environment's config allows.",
    category="cost",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set allowCapacityBlocks / allowCapacityReservations and list the reservation IDs in "
    "allowedReservationIds for the environment that bought them; pair reservations with a utilisation alarm.",
    references=("gpucloud guardrails rule 39",),
    kind="resource",
    surfaces=frozenset({"compute"}),
    resource_types=frozenset({NODE_GROUP, LAUNCH_TEMPLATE, NODE_CLASS}),
    validate=validate,
    config={
        "allowCapacityBlocks": {"type": "boolean", "default": False, "description": "Capacity Blocks allowed."},
        "allowCapacityReservations": {
            "type": "boolean",
            "default": True,
            "description": "Targeted On-Demand Capacity Reservations allowed.",
        },
        "allowedReservationIds": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Reservation IDs that may be targeted; empty allows any.",
        },
    },
)
