"""`gpucloud mix`: the cheapest split of a fleet over On-Demand, 1y/3y commitments, Capacity Blocks and spot."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpucloud.catalog import NotInCatalog, UnknownInstanceType
from gpucloud.cli.errors import EXIT_OK, CliError
from gpucloud.cli.recommend import TEXT_WIDTH, console_text

SHORT = {"on_demand": "OD", "reserved_1y": "1y", "reserved_3y": "3y", "capacity_block": "CB", "spot": "spot"}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mix",
        help="cheapest split of a fleet over on-demand, 1y/3y commitments, Capacity Blocks and spot",
        description="Optimise a fleet's split over On-Demand, 1y/3y commitments (whole terms), Capacity Blocks "
        "and spot, counting the work spot interruptions destroy (exact exponential model at the optimal "
        "checkpoint interval); shows the runner-up options and a nodePools fragment for the stack file.",
    )
    p.add_argument("instance_type", help="instance type, e.g. p5.48xlarge")
    p.add_argument("--nodes", type=int, required=True, help="fleet size (nodes)")
    p.add_argument("--months", type=float, default=12.0, help="how long the fleet runs (default 12)")
    p.add_argument(
        "--tolerance",
        choices=("none", "low", "medium", "high"),
        default="medium",
        help="spot share allowed: none 0%%, low 25%%, medium 50%%, high 100%%",
    )
    p.add_argument("--checkpoint-seconds", type=float, default=300.0, help="time to write one checkpoint (300)")
    p.add_argument("--restart-seconds", type=float, default=600.0, help="time to resume after an interruption (600)")
    p.add_argument(
        "--coupling",
        choices=("synchronous", "independent"),
        default="synchronous",
        help="synchronous: one job over all nodes stops on any interruption; independent: per-node work",
    )
    p.add_argument(
        "--interruptions-per-month",
        type=float,
        help="per spot instance; default from the family's Spot Advisor bucket",
    )
    p.add_argument("--pool-name", default="gpu-pool", help="name for the emitted pool fragment")
    p.add_argument("--workload", choices=("training", "inference", "hpc", "rendering"), default="training")
    p.add_argument("--format", choices=("text", "json", "yaml"), default="text", help="yaml prints the fragment only")
    p.set_defaults(func=run)


def split_text(split: dict[str, int]) -> str:
    return " + ".join(f"{n} {SHORT[kind]}" for kind, n in split.items() if n)


def run(args: argparse.Namespace) -> int:
    from gpucloud.advisor.mix import MixInputError, MixRequest, plan_mix

    request = MixRequest(
        instance_type=args.instance_type,
        nodes=args.nodes,
        duration_months=args.months,
        tolerance=args.tolerance,
        checkpoint_seconds=args.checkpoint_seconds,
        restart_seconds=args.restart_seconds,
        coupling=args.coupling,
        interruptions_per_month=args.interruptions_per_month,
        pool_name=args.pool_name,
        workload=args.workload,
    )
    try:
        result = plan_mix(request)
    except (MixInputError, UnknownInstanceType, NotInCatalog) as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK
    if args.format == "yaml":
        print(result["node_pools_yaml"] + (result["pricing_yaml"] or ""), end="")
        return EXIT_OK
    print(console_text(lambda console, table: _text(result, console, table), width=TEXT_WIDTH), end="")
    return EXIT_OK


def _text(result: dict[str, Any], console: Any, table: Any) -> None:
    req, prices, model, best = result["request"], result["prices"], result["model"], result["best"]
    console.print(
        f"[bold]{req['nodes']} x {req['instance_type']}[/bold] for {req['duration_months']:g} months, "
        f"{req['coupling']}, tolerance {req['tolerance']} (at most {model['max_spot_nodes']} spot)"
    )
    rates = [
        f"{label} {prices[key]:,.2f}"
        for label, key in (
            ("OD", "on_demand_hour"),
            ("spot", "spot_hour"),
            ("1y", "reserved_1y_hour"),
            ("3y", "reserved_3y_hour"),
            ("CB", "capacity_block_hour"),
        )
        if prices[key] is not None
    ]
    console.print(f"{prices['region']} $/node-h: " + ", ".join(rates) + f" (prices {prices['price_date']})")
    console.print(f"spot: {prices['spot_source']}")
    console.print(
        f"interruptions: {model['interruptions_per_instance_hour']:.5f}/instance-h, {model['interruption_source']}"
    )
    console.print(f"[bold]Best: {split_text(best['split'])}[/bold], expected ${best['cost']['total_usd']:,.0f}")
    cp = best["checkpoint"]
    if cp:
        console.print(
            f"checkpoint every {cp['optimal_minutes']:,.1f} min (exact; Young {cp['young_minutes']:,.1f} min); "
            f"{cp['lost_fraction']:.2%} of paid time lost, ${best['cost']['lost_work_usd']:,.0f}"
        )
    for c in best["commitments"]:
        after = f", then {c['on_demand_months_after']:.1f} months OD" if c["on_demand_months_after"] > 0 else ""
        unused = f" ({c['unused_months']:.1f} months unused)" if c["unused_months"] > 0 else ""
        console.print(f"{c['nodes']} {c['kind']}: {c['terms']} whole term(s){unused}{after}")
    blocks = best["capacity_blocks"]
    if blocks:
        after = f", then {blocks['on_demand_hours_after']:.1f} h OD" if blocks["on_demand_hours_after"] > 0 else ""
        console.print(
            f"{blocks['nodes']} capacity-block: {blocks['block_days']} days as blocks of "
            f"{'+'.join(map(str, blocks['block_lengths_days']))} days{after}"
        )
    t = table("Options, expected USD over the job")
    for col, justify in (("option", "left"), ("split", "left"), ("lost work", "right"), ("total", "right")):
        t.add_column(col, justify=justify)
    for o in [best, *result["runners_up"]]:
        label = o["label"] if o.get("allowed", True) else f"{o['label']} (not allowed)"
        t.add_row(label, split_text(o["split"]), f"{o['cost']['lost_work_usd']:,.0f}", f"{o['cost']['total_usd']:,.0f}")
    console.print(t)
    for note in result["notes"]:
        console.print(note)
    console.print("Pool fragment for the stack file:")
    console.print(result["node_pools_yaml"] + (result["pricing_yaml"] or ""), markup=False, end="")
