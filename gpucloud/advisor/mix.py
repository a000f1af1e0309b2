"""Capacity-mix optimiser (`gpucloud mix`): the cheapest split of a fleet over On-Demand, 1y/3y commitments,
Capacity Blocks and spot, with the work spot interruptions destroy counted in the cost.

The model (stated in every result under ``model``):

* Spot interruptions are a Poisson process, rate lambda per instance-hour (the family's Spot Advisor bucket, or
  ``interruptions_per_month``). A synchronous job (data/tensor parallel training) stops whenever any of its ``s``
  spot nodes is interrupted, so the job sees ``s * lambda``; an independent job (batch inference, rendering) sees
  ``lambda`` per node.
* Work is checkpointed every ``tau`` hours of work; a checkpoint takes ``C``; after an interruption the job waits
  ``R`` (replacement node, image pull, checkpoint load) and repeats the segment. An attempt at a segment lasts
  ``min(X, tau + C)`` with X ~ Exp(lambda); it succeeds with p = exp(-lambda (tau + C)). The number of failed
  attempts is geometric with mean (1 - p) / p, E[min(X, s)] = (1 - exp(-lambda s)) / lambda, so the expected wall
  time of one segment is ``(exp(lambda (tau + C)) - 1) (1/lambda + R)`` and per unit of work
  ``T(tau) = (exp(lambda (tau + C)) - 1) (1/lambda + R) / tau``. This is the exact exponential-failure model of
  Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006
  (eq. 7, with the restart outside the failure window).
* ``dT/dtau = 0`` gives ``(1 - lambda tau) exp(lambda tau) = exp(-lambda C)``: solved here by bisection on
  ``x = lambda tau`` in (0, 1), where the left side falls monotonically from 1 to 0 (closed form
  ``x = 1 + W0(-exp(-1 - lambda C))``). Young's first-order interval ``sqrt(2 C / lambda)`` (Young, CACM 17(9),
  1974) is reported beside it.
* Paid time: a synchronous job's wall time stretches to ``hours * T(tau*)`` for every node; an independent job's
  spot nodes pay ``T(tau*)`` times their hours. On-Demand and Capacity Blocks bill the hours used; a 1y/3y
  commitment bills whole terms (a 1y term for a 7-month job costs 12 months), optionally followed by On-Demand
  for what is left. Capacity Blocks are bought and extended in 1-day steps to 14 days and 7-day steps to 182,
  so any whole number of days is a block (or a block and an extension) billed up front; the last part-day takes
  one more block day or runs On-Demand after the block ends, whichever is cheaper. At most 256 instances per
  account, in blocks of 1, 2, 4, 8, 16, 32 or 64.
* The tolerance caps the spot share: none 0 %, low 25 %, medium 50 %, high 100 %.

Given the spot count, the job's wall time is fixed and every non-spot node's cost is linear and independent of
the others, so the optimum is exact: for each spot count, every other node takes the cheapest node plan
(filling the Capacity Block cap first when that is cheapest), and the cheapest spot count wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

import yaml

from gpucloud.advisor.rates import (
    CAPACITY_BLOCK_MAX_DAYS,
    HOURS_PER_MONTH,
    NodeRates,
    block_lengths,
    block_sizes,
    capacity_block_plan,
    node_rates,
)
from gpucloud.catalog import Catalog, get_catalog

Tolerance = Literal["none", "low", "medium", "high"]
Coupling = Literal["synchronous", "independent"]
SCHEMA: Final = "gpucloud.mix/v1"
SPOT_SHARE_CAP: Final[dict[str, float]] = {"none": 0.0, "low": 0.25, "medium": 0.5, "high": 1.0}
TERM_MONTHS: Final[dict[str, int]] = {"reserved_1y": 12, "reserved_3y": 36}
# AWS Capacity Blocks: up to 64 instances per block and 256 across all blocks of an account.
CAPACITY_BLOCK_MAX_INSTANCES: Final = 256
KINDS: Final = ("on_demand", "reserved_1y", "reserved_3y", "capacity_block", "spot")
KIND_LABEL: Final = {
    "on_demand": "on-demand",
    "reserved_1y": "reserved-1y",
    "reserved_3y": "reserved-3y",
    "capacity_block": "capacity-block",
    "spot": "spot",
}
MODEL_SOURCES: Final = (
    "J. T. Daly, A higher order estimate of the optimum checkpoint interval for restart dumps, "
    "Future Generation Computer Systems 22(3):303-312, 2006",
    "J. W. Young, A first order approximation to the optimum checkpoint interval, CACM 17(9):530-531, 1974",
    "AWS Spot Instance Advisor interruption buckets; AWS EC2 Capacity Blocks limits (64 per block, 256 in all)",
)


class MixInputError(ValueError):
    """Bad planner input; the message says what to give instead."""


@dataclass(frozen=True, slots=True)
class MixRequest:
    instance_type: str
    nodes: int
    duration_months: float
    tolerance: Tolerance = "medium"
    checkpoint_seconds: float = 300.0
    restart_seconds: float = 600.0
    coupling: Coupling = "synchronous"
    # Interruptions per spot instance per month; None takes the family's Spot Advisor bucket.
    interruptions_per_month: float | None = None
    pool_name: str = "gpu-pool"
    workload: str = "training"


def young_interval(rate: float, checkpoint: float) -> float:
    """Young's first-order optimum sqrt(2 C / lambda), in the time unit of ``checkpoint`` and ``1 / rate``."""
    return math.sqrt(2 * checkpoint / rate)


def optimal_interval(rate: float, checkpoint: float) -> float:
    """The tau minimising T(tau): the root x = lambda tau of (1 - x) e^x = e^(-lambda C) in (0, 1), over lambda."""
    target = math.exp(-rate * checkpoint)
    lo, hi = 0.0, 1.0
    # 64 halvings of (0, 1) reach a double's resolution.
    for _ in range(64):
        mid = (lo + hi) / 2
        if (1 - mid) * math.exp(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2 / rate


def time_per_work(rate: float, tau: float, checkpoint: float, restart: float) -> float:
    """Expected wall time per unit of work, (e^(lambda (tau + C)) - 1) (1/lambda + R) / tau (Daly 2006).

    Infinite when interruptions come so much faster than a checkpoint is written that no segment ever finishes.
    """
    exponent = rate * (tau + checkpoint)
    if exponent > 700:
        return math.inf
    return math.expm1(exponent) * (1 / rate + restart) / tau


def checkpoint_plan(rate: float, checkpoint_h: float, restart_h: float) -> dict[str, float] | None:
    """Young's and the exact interval, and the expected time factor at each; None without interruptions."""
    if rate <= 0:
        return None
    young = young_interval(rate, checkpoint_h)
    exact = optimal_interval(rate, checkpoint_h)
    factor = time_per_work(rate, exact, checkpoint_h, restart_h)
    return {
        "interruptions_per_hour": rate,
        "mean_hours_between_interruptions": 1 / rate,
        "young_minutes": young * 60,
        "optimal_minutes": exact * 60,
        "time_factor_young": time_per_work(rate, young, checkpoint_h, restart_h),
        "time_factor": factor,
        "lost_fraction": 1 - 1 / factor,
    }


def node_plan(kind: str, rates: NodeRates, wall_hours: float) -> tuple[float, int] | None:
    """Cost of one node in market ``kind`` over ``wall_hours``, and the whole commitment terms it buys.

    A commitment buys k whole terms; hours past them run On-Demand. k ranges over 1..ceil(hours / term) and the
    cheapest wins (a 1y term then 6 months On-Demand can beat two 1y terms for an 18-month job).
    """
    if kind == "on_demand":
        return (rates.on_demand * wall_hours, 0) if rates.on_demand is not None else None
    if kind == "capacity_block":
        if rates.capacity_block is None:
            return None
        return capacity_block_plan(wall_hours, rates.capacity_block, rates.on_demand)[0], 0
    if kind == "spot":
        return (rates.spot * wall_hours, 0) if rates.spot is not None else None
    hourly = rates.reserved_1y if kind == "reserved_1y" else rates.reserved_3y
    if hourly is None or rates.on_demand is None:
        return None
    term_h = TERM_MONTHS[kind] * HOURS_PER_MONTH
    # The small slack keeps a job of exactly one term from rounding up to two on float noise.
    most = max(1, math.ceil(wall_hours / term_h - 1e-9))
    best: tuple[float, int] | None = None
    for terms in range(1, most + 1):
        cost = terms * term_h * hourly + max(0.0, wall_hours - terms * term_h) * rates.on_demand
        if best is None or cost < best[0]:
            best = (cost, terms)
    return best


def price_split(
    split: dict[str, int], rates: NodeRates, req: MixRequest, rate_per_instance: float, label: str
) -> dict[str, Any]:
    """Expected cost of one split, with and without the work interruptions destroy."""
    hours = req.duration_months * HOURS_PER_MONTH
    spot = split["spot"]
    job_rate = spot * rate_per_instance if req.coupling == "synchronous" else rate_per_instance
    plan = checkpoint_plan(job_rate, req.checkpoint_seconds / 3600, req.restart_seconds / 3600) if spot else None
    factor = plan["time_factor"] if plan else 1.0

    def cost(stretch: float) -> tuple[float, list[dict[str, Any]]]:
        wall = hours * stretch if req.coupling == "synchronous" else hours
        spot_hours = hours * stretch
        total = 0.0
        commitments: list[dict[str, Any]] = []
        for kind in KINDS:
            count = split[kind]
            if not count:
                continue
            priced = node_plan(kind, rates, spot_hours if kind == "spot" else wall)
            if priced is None:
                raise MixInputError(f"{req.instance_type} is not sold as {KIND_LABEL[kind]}")
            total += count * priced[0]
            if kind in TERM_MONTHS:
                term_h = TERM_MONTHS[kind] * HOURS_PER_MONTH
                commitments.append(
                    {
                        "kind": KIND_LABEL[kind],
                        "nodes": count,
                        "terms": priced[1],
                        "committed_months": priced[1] * TERM_MONTHS[kind],
                        "on_demand_months_after": max(0.0, wall - priced[1] * term_h) / HOURS_PER_MONTH,
                        "unused_months": max(0.0, priced[1] * term_h - wall) / HOURS_PER_MONTH,
                    }
                )
        return total, commitments

    total, commitments = cost(factor)
    undisturbed, _ = cost(1.0)
    blocks = None
    if split["capacity_block"] and rates.capacity_block is not None:
        wall = hours * factor if req.coupling == "synchronous" else hours
        _, days, after = capacity_block_plan(wall, rates.capacity_block, rates.on_demand)
        blocks = {
            "nodes": split["capacity_block"],
            "block_days": days,
            "block_lengths_days": block_lengths(days),
            "block_instance_counts": block_sizes(split["capacity_block"]),
            "on_demand_hours_after": after,
        }
    return {
        "label": label,
        "split": dict(split),
        "commitments": commitments,
        "capacity_blocks": blocks,
        "checkpoint": plan,
        "wall_hours": hours * factor if req.coupling == "synchronous" else hours,
        "cost": {
            "paid_without_interruptions_usd": undisturbed,
            "lost_work_usd": total - undisturbed,
            "total_usd": total,
            "per_month_usd": total / req.duration_months,
        },
    }


def _stretch(spot: int, rate: float, req: MixRequest) -> float:
    """Expected time per unit of work with ``spot`` spot nodes (1 without spot or interruptions)."""
    if not spot:
        return 1.0
    job_rate = spot * rate if req.coupling == "synchronous" else rate
    plan = checkpoint_plan(job_rate, req.checkpoint_seconds / 3600, req.restart_seconds / 3600)
    return plan["time_factor"] if plan else 1.0


def _best_for_spot(spot: int, rates: NodeRates, req: MixRequest, rate: float) -> dict[str, int] | None:
    """The cheapest split with exactly ``spot`` spot nodes: the other nodes take the cheapest node plans."""
    hours = req.duration_months * HOURS_PER_MONTH
    wall = hours * _stretch(spot, rate, req) if req.coupling == "synchronous" else hours
    ranked: list[tuple[float, str]] = []
    for kind in KINDS[:-1]:
        priced = node_plan(kind, rates, wall)
        if priced is not None:
            ranked.append((priced[0], kind))
    ranked.sort()
    split = dict.fromkeys(KINDS, 0)
    split["spot"] = spot
    left = req.nodes - spot
    for _, kind in ranked:
        take = min(left, CAPACITY_BLOCK_MAX_INSTANCES) if kind == "capacity_block" else left
        split[kind] = take
        left -= take
    return split if left == 0 else None


def _validate(req: MixRequest) -> None:
    if isinstance(req.nodes, bool) or not isinstance(req.nodes, int) or req.nodes < 1:
        raise MixInputError("--nodes must be a whole number of at least 1")
    if not req.duration_months > 0 or not math.isfinite(req.duration_months):
        raise MixInputError("--months must be a positive number of months (e.g. 7 or 0.5)")
    if not req.checkpoint_seconds > 0 or not math.isfinite(req.checkpoint_seconds):
        raise MixInputError("--checkpoint-seconds must be positive (time to write one checkpoint, e.g. 300)")
    if not req.restart_seconds >= 0 or not math.isfinite(req.restart_seconds):
        raise MixInputError("--restart-seconds must be 0 or more (time to resume after an interruption, e.g. 600)")
    if req.tolerance not in SPOT_SHARE_CAP:
        raise MixInputError(f"--tolerance must be one of {sorted(SPOT_SHARE_CAP)}")
    if req.coupling not in ("synchronous", "independent"):
        raise MixInputError("--coupling must be 'synchronous' (one job over all nodes) or 'independent'")
    per_month = req.interruptions_per_month
    if per_month is not None and (not per_month >= 0 or not math.isfinite(per_month)):
        raise MixInputError("--interruptions-per-month must be 0 or more (per spot instance, e.g. 0.2)")


def optimise(req: MixRequest, rates: NodeRates) -> dict[str, Any]:
    """Every candidate the optimiser weighed, best first, on already-resolved rates (no catalog access)."""
    _validate(req)
    rate = (
        req.interruptions_per_month / HOURS_PER_MONTH
        if req.interruptions_per_month is not None
        else rates.interruption_rate_per_hour
    )
    max_spot = math.floor(req.nodes * SPOT_SHARE_CAP[req.tolerance]) if rates.spot is not None else 0
    best: dict[str, Any] | None = None
    for spot in range(max_spot + 1):
        if math.isinf(_stretch(spot, rate, req)):
            break  # more spot nodes only interrupt the job more often
        split = _best_for_spot(spot, rates, req, rate)
        if split is None:
            continue
        option = price_split(split, rates, req, rate, "optimum")
        if best is None or option["cost"]["total_usd"] < best["cost"]["total_usd"]:
            best = option
    if best is None:
        raise MixInputError(
            f"{req.instance_type} cannot be bought for {req.nodes} nodes here: it has no On-Demand or commitment "
            f"price, at most {CAPACITY_BLOCK_MAX_INSTANCES} Capacity Block instances, and spot is "
            f"{'not sold' if rates.spot is None else f'capped at {max_spot} nodes by --tolerance {req.tolerance}'}"
        )
    alternatives: list[dict[str, Any]] = []
    for kind in KINDS:
        if node_plan(kind, rates, 1.0) is None:
            continue
        if kind == "capacity_block" and req.nodes > CAPACITY_BLOCK_MAX_INSTANCES:
            continue
        if kind == "spot" and math.isinf(_stretch(req.nodes, rate, req)):
            continue
        split = dict.fromkeys(KINDS, 0)
        split[kind] = req.nodes
        option = price_split(split, rates, req, rate, f"all-{KIND_LABEL[kind]}")
        option["allowed"] = kind != "spot" or req.nodes <= max_spot
        if not option["allowed"]:
            option["reason"] = f"--tolerance {req.tolerance} allows at most {max_spot} spot nodes"
        alternatives.append(option)
    if best["split"]["spot"]:
        no_spot = _best_for_spot(0, rates, req, rate)
        if no_spot is not None:
            option = price_split(no_spot, rates, req, rate, "best-without-spot")
            alternatives.append(option)
    best["allowed"] = True
    seen = {tuple(best["split"].values())}
    runners_up = []
    for option in sorted(alternatives, key=lambda o: o["cost"]["total_usd"]):
        key = tuple(option["split"].values())
        if key in seen:
            continue
        option.setdefault("allowed", True)
        seen.add(key)
        runners_up.append(option)
    return {
        "rate": rate,
        "max_spot": max_spot,
        "best": best,
        "runners_up": runners_up,
    }


def plan_mix(req: MixRequest, catalog: Catalog | None = None) -> dict[str, Any]:
    catalog = catalog or get_catalog()
    _validate(req)
    spec = catalog.get(req.instance_type)
    rates = node_rates(spec, catalog)
    result = optimise(req, rates)
    best = result["best"]
    split = best["split"]
    blocks = split["capacity_block"]
    fragment = pool_fragment(req, req.nodes - split["spot"] - blocks, split["spot"], blocks)
    pools: dict[str, Any] = {"nodePools": [fragment]}
    check_fragment(pools["nodePools"])
    commitments = [
        {"match": spec.family, "kind": "savings-plan", "term": kind.split("_")[1], "count": split[kind]}
        for kind in ("reserved_1y", "reserved_3y")
        if split[kind]
    ]
    pricing = {"gpucloud:pricing": {"commitments": commitments}} if commitments else None
    notes = []
    added = fragment["instanceTypes"][1:]
    if added:
        notes.append(
            f"The fragment's instanceTypes add {', '.join(added)} (same GPU shape): the stack spec wants at least "
            f"3 types in a pool that allows spot; the prices above are {req.instance_type}'s"
        )
    if split["capacity_block"]:
        block = best["capacity_blocks"]
        counts = block["block_instance_counts"]
        lengths = block["block_lengths_days"]
        full = sum(1 for d in lengths if d == CAPACITY_BLOCK_MAX_DAYS)
        rest = [d for d in lengths if d != CAPACITY_BLOCK_MAX_DAYS]
        parts = [f"{full} block(s) of {CAPACITY_BLOCK_MAX_DAYS} days"] if full else []
        if rest:
            parts.append(f"a {rest[0]}-day block" + (f" extended by {rest[1]} days" if len(rest) > 1 else ""))
        after = block["on_demand_hours_after"]
        notes.append(
            f"{split['capacity_block']} nodes on Capacity Blocks in blocks of {' + '.join(map(str, counts))} "
            f"instances for {block['block_days']} days ({' then '.join(parts)}; paid up front, ending at 11:30 UTC"
            + (f"; the last {after:.1f} hours run On-Demand" if after else "")
            + "); an extension or a later block needs free capacity when it is bought. Then put the block's id "
            "and AZ where the fragment has placeholders (capacity.reserved.capacityReservationIds, "
            "availabilityZones)"
        )
    return {
        "schema": SCHEMA,
        "request": {
            "instance_type": req.instance_type,
            "nodes": req.nodes,
            "duration_months": req.duration_months,
            "tolerance": req.tolerance,
            "coupling": req.coupling,
            "checkpoint_seconds": req.checkpoint_seconds,
            "restart_seconds": req.restart_seconds,
        },
        "model": {
            "interruptions_per_instance_hour": result["rate"],
            "interruption_source": (
                "given (--interruptions-per-month)"
                if req.interruptions_per_month is not None
                else rates.interruption_source
            ),
            "max_spot_share": SPOT_SHARE_CAP[req.tolerance],
            "max_spot_nodes": result["max_spot"],
            "time_per_work": "(exp(lambda*(tau+C)) - 1) * (1/lambda + R) / tau",
            "optimal_interval": "(1 - lambda*tau) * exp(lambda*tau) = exp(-lambda*C)",
            "young_interval": "sqrt(2*C/lambda)",
            "job_rate": "spot_nodes * lambda" if req.coupling == "synchronous" else "lambda per node",
            "sources": list(MODEL_SOURCES),
        },
        "prices": {
            "currency": catalog.currency,
            "region": catalog.price_region,
            "on_demand_hour": rates.on_demand,
            "spot_hour": rates.spot,
            "spot_source": rates.spot_source,
            "reserved_1y_hour": rates.reserved_1y,
            "reserved_3y_hour": rates.reserved_3y,
            "capacity_block_hour": rates.capacity_block,
            "price_date": rates.price_date,
        },
        "best": best,
        "runners_up": result["runners_up"],
        "notes": notes,
        "node_pools_yaml": yaml.safe_dump(pools, sort_keys=False),
        "pricing_yaml": yaml.safe_dump(pricing, sort_keys=False) if pricing else None,
    }


def _with_spot_candidates(fragment: dict[str, Any]) -> dict[str, Any]:
    from pydantic import ValidationError

    from gpucloud.spec import NodePoolSpec

    # The same pool On-Demand only, so that the diversity rule itself does not reject the probe.
    probe_input = _with_sample_block_id(
        {**fragment, "capacity": {**fragment["capacity"], "onDemandPercentageAboveBase": 100}}
    )
    try:
        probe = NodePoolSpec.model_validate(probe_input)
    except ValidationError:  # check_fragment reports what the spec rejects
        return fragment
    types = list(fragment["instanceTypes"])
    wanted = min(3, len(probe.spot_candidates))
    types += [c for c in probe.spot_candidates if c not in types][: max(0, wanted - len(types))]
    return {**fragment, "instanceTypes": types}


# Where the id of the Capacity Block the user buys goes; not an id, so the spec refuses the fragment until it
# is filled in. check_fragment validates with a well-formed id in its place.
BLOCK_ID_PLACEHOLDER: Final = "cr-<id of the Capacity Block you buy>"
BLOCK_AZ_PLACEHOLDER: Final = "<the AZ of that block>"
_SAMPLE_BLOCK_ID: Final = "cr-0123456789abcdef0"
_SAMPLE_BLOCK_AZ: Final = "us-east-1a"


def _with_sample_block_id(pool: dict[str, Any]) -> dict[str, Any]:
    reserved = pool.get("capacity", {}).get("reserved")
    if not reserved or reserved.get("capacityReservationIds") != [BLOCK_ID_PLACEHOLDER]:
        return pool
    capacity = {**pool["capacity"], "reserved": {**reserved, "capacityReservationIds": [_SAMPLE_BLOCK_ID]}}
    return {**pool, "capacity": capacity, "availabilityZones": [_SAMPLE_BLOCK_AZ]}


def check_fragment(pools: list[dict[str, Any]]) -> None:
    """The fragment goes into a stack file as printed, so it must pass the spec model that file is read with
    (sizes, names, capacity rules), the block id it cannot know aside: MixInputError lists what the spec
    rejects, and the fix."""
    from pydantic import ValidationError

    from gpucloud.spec import NodePoolSpec
    from gpucloud.spec.errors import issues_from_validation

    problems: list[str] = []
    for index, pool in enumerate(pools):
        try:
            NodePoolSpec.model_validate(_with_sample_block_id(pool))
        except ValidationError as exc:
            problems += [str(i) for i in issues_from_validation(exc, NodePoolSpec, f"nodePools[{index}]")]
    if problems:
        raise MixInputError(
            "the nodePools fragment for this fleet would not be a valid stack spec: "
            + "; ".join(problems)
            + ". Fix: change the flag behind that field (--nodes, --pool-name, --workload), or split the fleet "
            "over several pools and plan each one"
        )


def pool_fragment(req: MixRequest, on_demand_base: int, spot_nodes: int, block_nodes: int = 0) -> dict[str, Any]:
    """A `nodePools` entry (gpucloud.spec NodePoolSpec camelCase keys) for the best split. A split with spot
    lists the spot candidates the spec's diversity rule asks for (NodePoolSpec.spot_candidates), beside the type
    that was priced; Capacity Block nodes are the pool's reserved capacity, with placeholders where the id and AZ
    of the purchased block go (the spec refuses them, so a pasted fragment cannot plan until they are filled)."""
    fragment: dict[str, Any] = {
        "name": req.pool_name,
        "workload": req.workload,
        "instanceTypes": [req.instance_type],
        "minSize": 0,
        "desiredSize": req.nodes,
        "maxSize": req.nodes,
        # A mixed-instances group holds On-Demand and spot together, but Capacity Blocks only in managed groups.
        "backend": "self-managed" if on_demand_base and spot_nodes and not block_nodes else "managed",
        "capacity": {
            "onDemandBase": on_demand_base,
            "onDemandPercentageAboveBase": 0 if spot_nodes else 100,
            "spotAllocationStrategy": "price-capacity-optimized",
        },
    }
    if block_nodes:
        fragment["availabilityZones"] = [BLOCK_AZ_PLACEHOLDER]
        fragment["capacity"]["reserved"] = {
            "kind": "capacity-block",
            "count": block_nodes,
            "capacityReservationIds": [BLOCK_ID_PLACEHOLDER],
        }
    return _with_spot_candidates(fragment) if spot_nodes else fragment


def pool_advice(
    instance_type: str,
    nodes: int,
    duration_months: float = 12.0,
    tolerance: Tolerance = "medium",
    catalog: Catalog | None = None,
) -> dict[str, Any]:
    """The optimum for one plan pool, compact enough for a plan report: split, expected total, the saving over
    all On-Demand, and the checkpoint interval when the split uses spot."""
    result = plan_mix(MixRequest(instance_type, nodes, duration_months, tolerance), catalog)
    best = result["best"]
    on_demand = next((o for o in result["runners_up"] if o["label"] == "all-on-demand"), None)
    # The runner-ups drop a pure strategy that is the optimum itself.
    if on_demand is None and best["split"]["on_demand"] == nodes:
        on_demand = best
    baseline = on_demand["cost"]["total_usd"] if on_demand else None
    return {
        "instance_type": instance_type,
        "nodes": nodes,
        "duration_months": duration_months,
        "tolerance": tolerance,
        "split": best["split"],
        "total_usd": best["cost"]["total_usd"],
        "lost_work_usd": best["cost"]["lost_work_usd"],
        "all_on_demand_usd": baseline,
        "saving_usd": baseline - best["cost"]["total_usd"] if baseline is not None else None,
        "checkpoint_minutes": best["checkpoint"]["optimal_minutes"] if best["checkpoint"] else None,
    }
