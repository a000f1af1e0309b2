"""`gpucloud mix`: on-demand vs reserved vs spot vs a mix for a fleet, with checkpoint cadence."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpucloud.advisor.mix import MixInputError, MixRequest, plan_mix
from gpucloud.catalog import NotInCatalog, UnknownInstanceType
from gpucloud.cli.errors import EXIT_OK, CliError
from gpucloud.cli.recommend import console_text


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mix",
        help="compare on-demand, reserved, spot and a mix for a fleet",
        description="Monthly cost of all-on-demand, 1y/3y reserved, all-spot and the best mix for a fleet; expected "
        "spot interruptions per day and the Young/Daly checkpoint interval; a nodePools fragment for the stack file.",
    )
    p.add_argument("instance_type", help="instance type, e.g. p5.48xlarge")
    p.add_argument("--nodes", type=int, required=True, help="fleet size (nodes)")
    p.add_argument("--months", type=float, default=12.0, help="how long the fleet runs (default 12)")
    p.add_argument(
        "--tolerance",
        choices=("none", "low", "medium", "high"),
        default="medium",
        help="how well the job tolerates interruptions (none = no spot)",
    )
    p.add_argument("--checkpoint-seconds", type=float, default=300.0, help="time to write one checkpoint (300)")
    p.add_argument("--pool-name", default="gpu-pool", help="name for the emitted pool fragment")
    p.add_argument("--workload", choices=("training", "inference", "hpc", "rendering"), default="training")
    p.add_argument("--format", choices=("text", "json", "yaml"), default="text", help="yaml prints the fragment only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    request = MixRequest(
        instance_type=args.instance_type,
        nodes=args.nodes,
        duration_months=args.months,
        tolerance=args.tolerance,
        checkpoint_seconds=args.checkpoint_seconds,
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

    def body(console: Any, table: Any) -> None:
        prices = result["prices"]
        console.print(
            f"[bold]{args.nodes} x {args.instance_type}[/bold] for {args.months:g} months: On-Demand "
            f"${prices['on_demand_hour']:,.2f}/h, spot ${prices['spot_hour']:,.2f}/h ({prices['spot_source']}), "
            f"interruption bucket {prices['interruption_bucket']} ({prices['interruption_bucket_label']}/month)"
        )
        t = table("Options (USD)")
        for col in ("option", "on-demand/reserved", "spot", "monthly", "total", "interrupts/day", "checkpoint every"):
            t.add_column(col)
        for o in result["options"]:
            interval = o.get("checkpoint_interval_minutes")
            t.add_row(
                ("* " if o["option"] == result["recommended"] else "  ") + o["option"],
                str(o.get("on_demand_nodes", 0) + o.get("reserved_nodes", 0)),
                str(o["spot_nodes"]),
                f"{o['monthly']:,.2f}",
                f"{o['total']:,.2f}",
                f"{o['interruptions_per_day']:.3f}",
                f"{interval:,.1f} min" if interval else "-",
            )
        console.print(t)
        for o in result["options"]:
            if o.get("note") and "outlives" in o["note"]:
                console.print(f"[dim]{o['option']}: {o['note']}[/dim]")
        console.print(f"Recommended: [bold]{result['recommended']}[/bold]. Pool fragment for the stack file:")
        console.print(result["node_pools_yaml"] + (result["pricing_yaml"] or ""), markup=False)

    print(console_text(body), end="")
    return EXIT_OK
