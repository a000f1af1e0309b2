"""`gpucloud recommend`: GPU memory arithmetic for a workload and instance types ranked by cost per useful unit."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpucloud.advisor.recommend import BYTES_PER_PARAM, METRICS, AdvisorInputError, WorkloadSpec, recommend
from gpucloud.cli.errors import EXIT_OK, CliError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def register(sub: Any) -> None:
    p = sub.add_parser(
        "recommend",
        help="pick GPU instance types for a workload",
        description="Compute the accelerator memory a workload needs and rank catalog instance types by cost per "
        "useful unit ($ per BF16 PFLOP-hour for training, $ per GB GPU memory-hour for inference, FP64 for HPC).",
    )
    p.add_argument("workload", choices=("training", "inference", "hpc", "rendering"), help="workload kind")
    p.add_argument("--params", type=float, metavar="BILLIONS", help="model parameters, in billions (e.g. 70)")
    p.add_argument("--precision", choices=sorted(BYTES_PER_PARAM), default="bf16", help="weights precision")
    p.add_argument("--memory-gib", type=float, help="accelerator memory needed, instead of --params")
    p.add_argument("--gpus", type=int, help="accelerators the job wants (at least)")
    p.add_argument("--multi-node", action="store_true", help="the job spans nodes (flags types without EFA)")
    p.add_argument("--interconnect", choices=("any", "nvlink", "efa"), default="any", help="required interconnect")
    p.add_argument("--activation-headroom", type=float, default=0.25, help="training activations share (0.25)")
    p.add_argument("--kv-cache-headroom", type=float, default=0.3, help="inference KV-cache share (0.3)")
    p.add_argument("--rank-by", choices=sorted(METRICS), help="override the ranking metric")
    p.add_argument("--top", type=int, default=10, help="how many types to list (default 10)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in ("activation_headroom", "kv_cache_headroom"):
        if not 0 <= getattr(args, name) <= 10:
            raise CliError(f"--{name.replace('_', '-')} must be a fraction between 0 and 10 (0.25 = 25%)")
    if args.top < 1:
        raise CliError("--top must be at least 1")
    workload = WorkloadSpec(
        kind=args.workload,
        params_b=args.params,
        precision=args.precision,
        memory_gib=args.memory_gib,
        gpus=args.gpus,
        multi_node=args.multi_node,
        interconnect=args.interconnect,
        activation_headroom=args.activation_headroom,
        kv_cache_headroom=args.kv_cache_headroom,
        metric=args.rank_by,
    )
    try:
        result = recommend(workload, top=args.top)
    except AdvisorInputError as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK

    def body(console: Any, table: Any) -> None:
        console.print(
            f"[bold]{args.workload}[/bold]: needs {result['memory']['required_gib']:,.1f} GiB accelerator memory"
        )
        for line in result["memory"]["arithmetic"]:
            console.print(f"  {line}")
        console.print(f"  usable per accelerator: {result['memory']['usable_fraction']:.0%} of its memory")
        t = table(f"Ranked by {result['metric']['label']} (prices {result['price_date']})")
        for col in ("instance type", "accelerator", "nodes", "accel", "EFA", "$/h fleet", "$/unit-h", "flags"):
            t.add_column(col)
        for c in result["candidates"]:
            t.add_row(
                c["instance_type"],
                f"{c['accelerators_per_node']}x {c['accelerator']} {c['accelerator_memory_gib']:g} GiB",
                str(c["nodes"]),
                str(c["accelerators"]),
                "yes" if c["efa"] else "no",
                f"{c['fleet_usd_hour']:,.2f}",
                f"{c['cost_per_unit_hour']:,.4f}",
                "; ".join(c["flags"]),
            )
        console.print(t)
        if not result["candidates"]:
            console.print("[yellow]no catalog type fits; see --format json for why each was excluded[/yellow]")

    print(console_text(body), end="")
    return EXIT_OK


def console_text(body: Callable[[Console, Callable[[str], Table]], None], width: int = 140) -> str:
    """Render `body(console, table_factory)` to a string (shared by the advisor, preflight and prices commands)."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    color = sys.stdout.isatty()
    console = Console(file=buf, width=width, color_system="standard" if color else None, highlight=False)

    def table(title: str) -> Table:
        return Table(title=title, title_justify="left")

    body(console, table)
    return buf.getvalue()
