"""Capacity-mix planner: on-demand vs reserved (1y/3y) vs spot vs a mix, with interruptions and checkpoint cadence."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

import yaml

from gpucloud.catalog import Catalog, get_catalog

Tolerance = Literal["none", "low", "medium", "high"]
HOURS_PER_MONTH: Final = 730
DAYS_PER_MONTH: Final = 365 / 12
# Spot Instance Advisor buckets (interruptions per instance per month): midpoints, >20% taken as 25%.
BUCKET_MONTHLY_RATE: Final = {0: 0.025, 1: 0.075, 2: 0.125, 3: 0.175, 4: 0.25}
BUCKET_LABEL: Final = {0: "<5%", 1: "5-10%", 2: "10-15%", 3: "15-20%", 4: ">20%"}
# Share of the fleet kept off spot in the best mix, by how well the job tolerates interruptions.
ON_DEMAND_SHARE: Final[dict[str, float]] = {"none": 1.0, "low": 0.5, "medium": 0.25, "high": 0.0}


class MixInputError(ValueError):
    """Bad planner input; the message says what to give instead."""


@dataclass(frozen=True, slots=True)
class MixRequest:
    instance_type: str
    nodes: int
    duration_months: float
    tolerance: Tolerance = "medium"
    checkpoint_seconds: float = 300.0
    pool_name: str = "gpu-pool"
    workload: str = "training"


def young_daly(checkpoint_s: float, mtbi_s: float) -> tuple[float, float]:
    """Young's interval sqrt(2 C M) and Daly's first-order refinement sqrt(2 C M) - C, in seconds."""
    young = math.sqrt(2 * checkpoint_s * mtbi_s)
    return young, max(young - checkpoint_s, checkpoint_s)


def _commitment(od_hour: float, nodes: int, discount: float, term_months: int, duration: float) -> dict[str, Any]:
    monthly = nodes * od_hour * (1 - discount) * HOURS_PER_MONTH
    paid_months = max(term_months, duration)
    total = monthly * paid_months
    return {
        "monthly": round(monthly, 2),
        "total": round(total, 2),
        "effective_monthly": round(total / duration, 2),
        "discount": discount,
        "note": (
            f"a {term_months}-month commitment outlives the {duration:g}-month job: the unused months are paid too"
            if duration < term_months
            else f"{term_months}-month commitment"
        ),
    }


def plan_mix(req: MixRequest, catalog: Catalog | None = None) -> dict[str, Any]:
    catalog = catalog or get_catalog()
    if req.nodes < 1:
        raise MixInputError("--nodes must be at least 1")
    if req.duration_months <= 0:
        raise MixInputError("--months must be positive")
    if req.checkpoint_seconds <= 0:
        raise MixInputError("--checkpoint-seconds must be positive (time to write one checkpoint)")
    spec = catalog.get(req.instance_type)
    if spec.on_demand_usd is None:
        raise MixInputError(
            f"{req.instance_type} has no On-Demand price (Capacity Blocks only): plan it as a Capacity Block "
            "(capacity.reserved.kind: capacity-block) instead"
        )
    fam = catalog.family_pricing(spec.family)
    od = spec.on_demand_usd
    spot_hour = spec.spot_usd if spec.spot_usd is not None else od * (1 - fam.spot_discount)
    spot_source = (
        "refreshed spot price" if spec.spot_usd is not None else f"family estimate {fam.spot_discount:.0%} off"
    )
    n = req.nodes
    months = req.duration_months
    bucket = fam.spot_interruption_bucket
    rate = BUCKET_MONTHLY_RATE[bucket]

    def spot_risk(spot_nodes: int) -> dict[str, Any]:
        per_day = spot_nodes * rate / DAYS_PER_MONTH
        if per_day == 0:
            return {"interruptions_per_day": 0.0, "mtbi_hours": None, "checkpoint_interval_minutes": None}
        mtbi_s = 86400 / per_day
        young, daly = young_daly(req.checkpoint_seconds, mtbi_s)
        return {
            "interruptions_per_day": round(per_day, 3),
            "mtbi_hours": round(mtbi_s / 3600, 2),
            "checkpoint_interval_minutes": round(young / 60, 1),
            "checkpoint_interval_daly_minutes": round(daly / 60, 1),
            # Expected waste: checkpoint overhead C/T plus half an interval lost per interruption T/(2M).
            "expected_lost_fraction": round(req.checkpoint_seconds / young + young / (2 * mtbi_s), 4),
        }

    options: list[dict[str, Any]] = []
    od_monthly = n * od * HOURS_PER_MONTH
    options.append(
        {
            "option": "all-on-demand",
            "on_demand_nodes": n,
            "spot_nodes": 0,
            "monthly": round(od_monthly, 2),
            "total": round(od_monthly * months, 2),
            **spot_risk(0),
        }
    )
    for term, discount, term_months in (("1y", fam.reserved_1y, 12), ("3y", fam.reserved_3y, 36)):
        c = _commitment(od, n, discount, term_months, months)
        options.append(
            {
                "option": f"reserved-{term}",
                "on_demand_nodes": 0,
                "reserved_nodes": n,
                "spot_nodes": 0,
                "monthly": c["effective_monthly"],
                "commitment_monthly": c["monthly"],
                "total": c["total"],
                "discount": discount,
                "note": c["note"],
                **spot_risk(0),
            }
        )
    if spec.spot:
        spot_monthly = n * spot_hour * HOURS_PER_MONTH
        options.append(
            {
                "option": "all-spot",
                "on_demand_nodes": 0,
                "spot_nodes": n,
                "monthly": round(spot_monthly, 2),
                "total": round(spot_monthly * months, 2),
                **spot_risk(n),
            }
        )
    base = n if not spec.spot else math.ceil(n * ON_DEMAND_SHARE[req.tolerance])
    spot_nodes = n - base
    # The steady base is cheapest reserved when the job outlasts a term; otherwise on-demand.
    base_kind, base_hour = "on-demand", od
    for term, discount, term_months in (("3y", fam.reserved_3y, 36), ("1y", fam.reserved_1y, 12)):
        if months >= term_months:
            base_kind, base_hour = f"reserved-{term}", od * (1 - discount)
            break
    mix_monthly = (base * base_hour + spot_nodes * spot_hour) * HOURS_PER_MONTH
    best = {
        "option": "best-mix",
        "base": base_kind,
        "on_demand_nodes": base,
        "spot_nodes": spot_nodes,
        "monthly": round(mix_monthly, 2),
        "total": round(mix_monthly * months, 2),
        **spot_risk(spot_nodes),
    }
    options.append(best)
    # Tolerance bounds the spot share: none -> no spot; low/medium -> at most the best mix's share; high -> any.
    if req.tolerance == "none":
        allowed = [o for o in options if o["spot_nodes"] == 0]
    elif req.tolerance == "high":
        allowed = options
    else:
        allowed = [o for o in options if o["option"] != "all-spot"]
    chosen = min(allowed, key=lambda o: o["total"])
    chosen_base = n - chosen["spot_nodes"]
    fragment = pool_fragment(req, chosen_base, chosen["spot_nodes"])
    commitment_kind = chosen["option"] if chosen["option"].startswith("reserved") else chosen.get("base", "")
    pricing_fragment = None
    if commitment_kind.startswith("reserved") and chosen_base:
        pricing_fragment = {
            "gpucloud:pricing": {
                "commitments": [
                    {
                        "match": spec.family,
                        "kind": "savings-plan",
                        "term": commitment_kind.split("-")[1],
                        "count": chosen_base,
                    }
                ]
            }
        }
    return {
        "instance_type": req.instance_type,
        "nodes": n,
        "duration_months": months,
        "tolerance": req.tolerance,
        "checkpoint_seconds": req.checkpoint_seconds,
        "prices": {
            "on_demand_hour": od,
            "spot_hour": round(spot_hour, 4),
            "spot_source": spot_source,
            "interruption_bucket": bucket,
            "interruption_bucket_label": BUCKET_LABEL[bucket],
            "price_date": spec.price_date,
        },
        "options": options,
        "recommended": chosen["option"],
        "node_pools_yaml": yaml.safe_dump({"nodePools": [fragment]}, sort_keys=False),
        "pricing_yaml": yaml.safe_dump(pricing_fragment, sort_keys=False) if pricing_fragment else None,
    }


def pool_fragment(req: MixRequest, on_demand_base: int, spot_nodes: int) -> dict[str, Any]:
    """A `nodePools` entry (gpucloud.spec NodePoolSpec camelCase keys) for the best mix."""
    return {
        "name": req.pool_name,
        "workload": req.workload,
        "instanceTypes": [req.instance_type],
        "minSize": 0,
        "desiredSize": req.nodes,
        "maxSize": req.nodes,
        "backend": "self-managed" if on_demand_base and spot_nodes else "managed",
        "capacity": {
            "onDemandBase": on_demand_base,
            "onDemandPercentageAboveBase": 0 if spot_nodes else 100,
            "spotAllocationStrategy": "price-capacity-optimized",
        },
    }
