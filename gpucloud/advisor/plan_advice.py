"""The plan's mix advice: for every GPU pool of a priced plan, the `gpucloud mix` optimum beside what the pool is
configured to buy today, and the saving.

Pools come from the cost engine's reading of capacity (its priced instance items, and the unpriced entries that
carry the nodes they could not price), never from a reader of its own: whatever path the engine prices (node
groups, autoscaling groups, fleets, instances, Karpenter NodePools at their expected size) is advised. Resources
carrying the same ``gpucloud.io/pool`` label are one pool (gpucloud splits a pool into an On-Demand and a spot
node group); a resource without it is a pool of its own. What the pool is for comes from its node labels or tags:

* ``gpucloud.io/workload``: training and hpc run one synchronous job over all nodes, inference and rendering run
  independent replicas (the optimiser's ``coupling``); unmarked or unknown kinds count as training, the
  assumption that charges spot the most lost work.
* ``gpucloud.io/interruptible``: ``"false"`` allows no spot (tolerance none), ``"true"`` any share (high);
  unmarked pools get the `gpucloud mix` default (medium, at most half on spot), or high when the pool already
  runs more than half of its nodes on spot (its configuration says it tolerates that).

Prices are the plan region's, from the price book the cost engine priced the plan with, so the current setup and
the advice are priced alike; a type without a price in the region gets no advice, with the book's reason.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from gpucloud import fleet
from gpucloud.advisor.mix import (
    KIND_LABEL,
    KINDS,
    SPOT_SHARE_CAP,
    Coupling,
    MixInputError,
    MixRequest,
    NodeRates,
    Tolerance,
    optimise,
    price_split,
)
from gpucloud.advisor.rates import bucket_rate_per_hour
from gpucloud.catalog import Catalog, get_catalog
from gpucloud.catalog.capacity_blocks import capacity_block_offering
from gpucloud.fleet import labels as L
from gpucloud.prices.book import PriceBook, get_price_book, load_snapshot
from gpucloud.prices.provenance import rate_basis

DEFAULT_HORIZON_MONTHS: Final = 12.0
POOL_KEY: Final = L.POOL
WORKLOAD_KEY: Final = L.WORKLOAD
INTERRUPTIBLE_KEY: Final = L.INTERRUPTIBLE
_INDEPENDENT_WORKLOADS: Final = frozenset({"inference", "rendering"})
# Cost-engine pricing kinds -> optimiser kinds (reserved items are split by their commitment term below).
_MARKET_KIND: Final = {"on-demand": "on_demand", "spot": "spot", "capacity-block": "capacity_block"}
# Savings smaller than a cent are float noise between equal-cost splits, not advice.
_CENT: Final = 0.005
MODEL: Final = (
    "gpucloud mix optimiser (gpucloud.advisor.mix): On-Demand, 1y/3y whole terms, Capacity Blocks and spot with "
    "the work interruptions destroy (Daly 2006), over the horizon; see docs/advisor.md"
)


class MixHorizonError(ValueError):
    """A horizon that is not a positive number of months."""


def validate_horizon(months: Any) -> float:
    """The horizon in months, or MixHorizonError saying what to give."""
    if isinstance(months, bool) or not isinstance(months, int | float):
        raise MixHorizonError(f"mix horizon {months!r} is not a number of months; give e.g. --mix-horizon 12")
    if not math.isfinite(months) or months <= 0:
        raise MixHorizonError(f"a mix horizon of {months:g} months: give more than 0 months, e.g. --mix-horizon 12")
    return float(months)


@dataclass(frozen=True, slots=True)
class _Pool:
    name: str
    instance_type: str
    urns: tuple[str, ...]
    items: tuple[Mapping[str, Any], ...]
    unpriced: tuple[Mapping[str, Any], ...]


def _mark(marks: Sequence[Sequence[Mapping[str, Any]]], key: str) -> str:
    """The first value of ``key`` on the pools' label and tag maps (gpucloud.fleet.Pool.marks), lower-cased."""
    for sources in marks:
        for source in sources:
            value = source.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip().lower()
    return ""


def _pools(
    cost: Mapping[str, Any],
    by_urn: Mapping[str, Mapping[str, Any]],
    marks: Mapping[str, Sequence[Mapping[str, Any]]],
    catalog: Catalog,
) -> list[_Pool]:
    """GPU pools in the order the cost engine met them: priced items and unpriced nodes grouped by pool and type."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}

    def add(entry: Mapping[str, Any], kind: str) -> None:
        itype = str(entry.get("instance_type"))
        spec = catalog.find(itype)
        if spec is None or spec.accelerator_count <= 0:
            return
        urn = str(entry.get("urn"))
        resource = by_urn.get(urn) or {}
        pool = _mark([marks.get(urn, ())], POOL_KEY)
        key = (f"pool:{pool}" if pool else urn, itype)
        # urn:pulumi:<stack>::<project>::<type>::<name>, where the name itself may hold "::".
        name = pool or str(resource.get("name") or urn.split("::", 3)[-1])
        group = groups.setdefault(key, {"name": name, "urns": [], "items": [], "un": []})
        if urn not in group["urns"]:
            group["urns"].append(urn)
        group[kind].append(entry)

    for item in cost.get("items") or []:
        add(item, "items")
    for entry in cost.get("unpriced") or []:
        if "nodes" in entry:
            add(entry, "un")
    # A type the pool runs no nodes of (a Karpenter ceiling on a dearer type than the expected nodes) is not a
    # pool of its own; a pool with no nodes at all keeps one entry that says so.
    busy = {k[0] for k, g in groups.items() if any(i.get("quantity") for i in g["items"]) or g["un"]}
    return [
        _Pool(g["name"], k[1], tuple(g["urns"]), tuple(g["items"]), tuple(g["un"]))
        for k, g in groups.items()
        if k[0] not in busy or any(i.get("quantity") for i in g["items"]) or g["un"]
    ]


def estimated_kinds(instance_type: str, region: str, book: PriceBook) -> dict[str, str]:
    """Optimiser kind -> the rule, for the kinds whose rate in the region is a planning estimate (a spot or
    commitment rate derived from a family discount), not a published or refreshed price."""
    found = book.rates(instance_type, region)
    out: dict[str, str] = {}
    for kind in ("spot", "reserved_1y", "reserved_3y"):
        fig = getattr(found, kind)
        if fig is not None and fig.estimated:
            out[kind] = str(rate_basis(fig.source, fig.as_of)["rule"])
    return out


def _node_rates(
    instance_type: str, region: str, book: PriceBook, catalog: Catalog, drop: frozenset[str] = frozenset()
) -> NodeRates | str:
    """The optimiser's rates from the regional price book, or why the type has none in the region. The kinds in
    ``drop`` (estimated rates when estimates are not asked for) are left out, so no advice rests on them."""
    found = book.rates(instance_type, region)
    if found.on_demand is None and found.spot is None and found.capacity_block is None:
        return found.reason("on_demand")
    bucket = catalog.family_pricing(catalog.get(instance_type).family).spot_interruption_bucket

    def usd(kind: str) -> float | None:
        fig = getattr(found, kind)
        return fig.usd if fig is not None and kind not in drop else None

    # Only the rates and the interruption rate: the optimiser reads nothing else, and the entry reports none of
    # NodeRates' sources (they stay at their defaults).
    return NodeRates(
        on_demand=found.on_demand.usd if found.on_demand else None,
        spot=usd("spot"),
        reserved_1y=usd("reserved_1y"),
        reserved_3y=usd("reserved_3y"),
        capacity_block=found.capacity_block.usd if found.capacity_block else None,
        interruption_rate_per_hour=bucket_rate_per_hour(bucket),
    )


# (book) -> {(type, nodes, region, tolerance, horizon, coupling): optimise() result}; the optimiser is exact,
# so a plan -- or many plans of one `--all` run -- asks each question once.
_MEMO: weakref.WeakKeyDictionary[PriceBook, dict[tuple[Any, ...], dict[str, Any]]] = weakref.WeakKeyDictionary()


def _optimum(req: MixRequest, rates: NodeRates, region: str, book: PriceBook) -> dict[str, Any]:
    key = (req.instance_type, req.nodes, region, req.tolerance, req.duration_months, req.coupling)
    memo = _MEMO.setdefault(book, {})
    if key not in memo:
        memo[key] = optimise(req, rates)
    return memo[key]


def _tolerance(mark: str, spot_share: float) -> tuple[Tolerance, str]:
    if mark == "false":
        return "none", f"{INTERRUPTIBLE_KEY}=false: no spot"
    if mark == "true":
        return "high", f"{INTERRUPTIBLE_KEY}=true: any share on spot"
    if spot_share > SPOT_SHARE_CAP["medium"]:
        return "high", f"unmarked; the pool already runs {spot_share:.0%} of its nodes on spot"
    return "medium", "unmarked: the gpucloud mix default, at most half the nodes on spot"


def _current(pool: _Pool) -> tuple[dict[str, int], dict[str, Any], float]:
    """The pool's split today (optimiser kinds), the hourly rate of its reserved kinds (by NodeRates field), and
    its monthly cost."""
    split = dict.fromkeys(KINDS, 0)
    reserved_rate: dict[str, Any] = {}
    for item in pool.items:
        count = int(item.get("quantity") or 0)
        pricing = str(item.get("pricing"))
        if pricing == "reserved":
            # The engine records the commitment behind a reserved item, its term included (also when the
            # discount itself was given in gpucloud:pricing).
            kind = "reserved_3y" if (item.get("commitment") or {}).get("term") == "3y" else "reserved_1y"
            reserved_rate[kind] = float(item["unit_price"])
        else:
            kind = _MARKET_KIND.get(pricing, "on_demand")
        split[kind] += count
    monthly = round(sum(float(i["monthly"]) for i in pool.items), 2)
    return split, reserved_rate, monthly


def _describe(split: Mapping[str, int]) -> str:
    return " + ".join(f"{n} {KIND_LABEL[k]}" for k, n in split.items() if n)


def _money(value: float) -> float:
    return round(value, 2)


def _pool_advice(
    pool: _Pool,
    resources: Sequence[Sequence[Mapping[str, Any]]],
    region: str,
    horizon: float,
    book: PriceBook,
    catalog: Catalog,
    include_estimates: bool = False,
) -> dict[str, Any]:
    workload = _mark(resources, WORKLOAD_KEY)
    coupling: Coupling = "independent" if workload in _INDEPENDENT_WORKLOADS else "synchronous"
    split, reserved_rate, monthly = _current(pool)
    nodes = sum(split.values())
    spot_share = split["spot"] / nodes if nodes else 0.0
    tolerance, tolerance_from = _tolerance(_mark(resources, INTERRUPTIBLE_KEY), spot_share)
    entry: dict[str, Any] = {
        "pool": pool.name,
        "resources": list(pool.urns),
        "instance_type": pool.instance_type,
        "nodes": nodes,
        "workload": workload or "training (unmarked)",
        "coupling": coupling,
        "tolerance": tolerance,
        "tolerance_from": tolerance_from,
        "status": "no-advice",
        "reason": None,
        "current": None,
        "advice": None,
        "saving_usd": None,
        "saving_percent": None,
    }
    if pool.unpriced:
        entry["nodes"] = nodes + sum(int(u["nodes"]) for u in pool.unpriced)
        entry["reason"] = f"not priced in {region}: {pool.unpriced[0].get('reason')}"
        return entry
    if nodes == 0:
        entry["reason"] = (
            "no nodes at the expected size (desired 0, or a Karpenter NodePool without an expected size): "
            "the optimiser advises a steady node count"
        )
        return entry
    estimates = estimated_kinds(pool.instance_type, region, book)
    # Kinds the pool holds today keep their rate (today must be priced); other estimated kinds are not offered
    # to the optimiser unless estimates are asked for.
    held = {k for k, n in split.items() if n}
    drop = frozenset() if include_estimates else frozenset(set(estimates) - held)
    rates = _node_rates(pool.instance_type, region, book, catalog, drop)
    if isinstance(rates, str):
        entry["reason"] = rates
        return entry
    # The pool's name and workload only name a `gpucloud mix` NodePool fragment, which the advice does not write.
    req = MixRequest(pool.instance_type, nodes, horizon, tolerance, coupling=coupling)
    try:
        result = _optimum(req, rates, region, book)
        # Today's commitments cost what the plan was priced at (the kinds it holds); the book's rates otherwise.
        current_rates = replace(rates, **reserved_rate)
        current = price_split(split, current_rates, req, result["rate"], "current")
    except MixInputError as exc:
        entry["reason"] = str(exc)
        return entry
    best = result["best"]
    saving = current["cost"]["total_usd"] - best["cost"]["total_usd"]
    entry["current"] = {
        "split": dict(split),
        "describe": _describe(split),
        "monthly_usd": monthly,
        "total_usd": _money(current["cost"]["total_usd"]),
        "lost_work_usd": _money(current["cost"]["lost_work_usd"]),
    }
    entry["advice"] = {
        "split": dict(best["split"]),
        "describe": _describe(best["split"]),
        "total_usd": _money(best["cost"]["total_usd"]),
        "lost_work_usd": _money(best["cost"]["lost_work_usd"]),
        "per_month_usd": _money(best["cost"]["per_month_usd"]),
        "checkpoint_minutes": round(best["checkpoint"]["optimal_minutes"], 1) if best["checkpoint"] else None,
        "commitments": [
            {k: round(v, 4) if isinstance(v, float) else v for k, v in c.items()} for c in best["commitments"]
        ],
    }
    if best["split"].get("capacity_block"):
        # Where AWS sells the blocks: listed by a source, or undecided (the sources are older lists).
        offering = capacity_block_offering(pool.instance_type, region, sold_as_blocks=True)
        entry["advice"]["capacity_block_offering"] = {"status": offering.status, "reason": offering.reason}
    over_tolerance = split["spot"] > result["max_spot"]
    # A saving computed with an estimated rate (today's or the advice's) is an estimate: shown only when asked for.
    used = {k for k in estimates if split.get(k) or best["split"].get(k)}
    entry["saving_basis"] = "estimate" if used else "published"
    entry["estimated_rates"] = {k: estimates[k] for k in sorted(used)}
    if used and not include_estimates and best["split"] != split and not over_tolerance:
        entry["reason"] = (
            "the saving would rest on estimated rates ("
            + "; ".join(f"{KIND_LABEL[k]}: {estimates[k]}" for k in sorted(used))
            + "): pass --include-estimates to see it"
        )
        entry["advice"] = None
        return entry
    if best["split"] == split or (saving < _CENT and not over_tolerance):
        entry["status"] = "already-optimal"
        entry["saving_usd"] = 0.0
        entry["saving_percent"] = 0.0
        return entry
    entry["status"] = "advice"
    entry["saving_usd"] = _money(saving)
    entry["saving_percent"] = round(100 * saving / current["cost"]["total_usd"], 1)
    if over_tolerance:
        entry["reason"] = (
            f"{split['spot']} spot nodes exceed what tolerance {tolerance} allows ({result['max_spot']}): "
            f"{tolerance_from}"
        )
    return entry


def mix_advice(
    resources: Sequence[Mapping[str, Any]],
    cost: Mapping[str, Any],
    horizon_months: float = DEFAULT_HORIZON_MONTHS,
    *,
    catalog: Catalog | None = None,
    book: PriceBook | None = None,
    include_estimates: bool = False,
) -> dict[str, Any]:
    """The plan report's ``mix_advice`` section for a plan's resources and its priced ``cost`` section.

    Savings come from published or refreshed rates; advice that rests on an estimated rate (planning spot or
    commitment discounts) is given only with ``include_estimates``, marked ``saving_basis: estimate`` and summed
    apart (``estimated_saving_usd``)."""
    horizon = validate_horizon(horizon_months)
    catalog = catalog or get_catalog()
    if book is None:
        book = get_price_book() if catalog is get_catalog() else PriceBook(load_snapshot(), catalog)
    region = str(cost.get("region") or "us-east-1")
    by_urn = {str(r.get("urn")): r for r in resources}
    # What marks each pool (its node labels and tags) is the fleet layer's reading, as for every reader.
    marks = {p.urn: p.marks for p in fleet.pools(resources, region=region, catalog=catalog)}
    pools = []
    for pool in _pools(cost, by_urn, marks, catalog):
        members = [marks.get(u, ()) for u in pool.urns if u in by_urn]
        pools.append(_pool_advice(pool, members, region, horizon, book, catalog, include_estimates))
    advised = [p for p in pools if p["status"] == "advice"]
    published = [p for p in advised if p.get("saving_basis") != "estimate"]
    return {
        "horizon_months": horizon,
        "region": region,
        "model": MODEL,
        "pools": pools,
        "advised": len(advised),
        "already_optimal": sum(p["status"] == "already-optimal" for p in pools),
        "not_advised": sum(p["status"] == "no-advice" for p in pools),
        "saving_usd": _money(sum(p["saving_usd"] for p in published)),
        "include_estimates": include_estimates,
        "estimated_saving_usd": (
            _money(sum(p["saving_usd"] for p in advised if p.get("saving_basis") == "estimate"))
            if include_estimates
            else None
        ),
    }
