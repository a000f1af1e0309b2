"""`gpucloud cost --stack NAME`: what the stack's plan says a period should cost next to what Cost Explorer says it
did cost (boto3, standard credential chain; the Cost Explorer API is served from us-east-1)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_OK, CliError
from gpucloud.cli.recommend import console_text

CE_REGION = "us-east-1"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "cost",
        help="compare a stack's planned cost with its actual spend (Cost Explorer)",
        description="Plan the stack offline and price it, then ask Cost Explorer what the resources carrying the "
        "stack's cost-allocation tags cost over the period (a team stack also counts its pods on the shared GPU "
        "nodes through split cost allocation data: aws:eks:cluster-name and aws:eks:namespace). The plan's monthly "
        "figures are prorated to the period by hours.",
    )
    p.add_argument("--stack", required=True, help="stack name")
    p.add_argument("--program", default=".", help="Pulumi project directory (default: the current directory)")
    p.add_argument("--start", type=_date, help="first day, YYYY-MM-DD (default: the 1st of this month)")
    p.add_argument("--end", type=_date, help="day after the last, YYYY-MM-DD (default: today)")
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="filter on these cost-allocation tags instead of the stack's own (repeatable; all must match)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{value}' is not a date; write YYYY-MM-DD, e.g. 2026-11-01") from None


def _tags(pairs: list[str]) -> dict[str, str]:
    tags: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise CliError(f"--tag {pair!r}: write KEY=VALUE, e.g. --tag Project=gpucloud")
        tags[key] = value
    return tags


def stack_allocation(config: dict[str, Any], plan: Any, stack: str) -> tuple[dict[str, str], dict[str, str]]:
    """The stack's own cost-allocation tags, and (team stacks) the split-cost-allocation tags of its pods."""
    from gpucloud.spec import parse_platform
    from gpucloud.spec.team import parse_team

    if "gpucloud:platform" in config:
        spec = parse_platform(config["gpucloud:platform"], f"stack '{stack}'", config.get("aws:region"))
        return {"Project": spec.tags["Project"], "Env": spec.environment}, {}
    if "gpucloud:team" in config:
        team = parse_team(config["gpucloud:team"], f"stack '{stack}'", config.get("aws:region"))
        pods = {"aws:eks:namespace": team.namespace}
        clusters = {
            r.inputs.get("clusterName")
            for r in plan.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
            if isinstance(r.inputs.get("clusterName"), str)
        }
        if len(clusters) == 1:
            pods["aws:eks:cluster-name"] = clusters.pop()
        return {"GpuTeam": team.name, "Env": team.environment}, pods
    raise CliError(f"stack '{stack}' has neither gpucloud:platform nor gpucloud:team; give --tag KEY=VALUE")


def run(args: argparse.Namespace) -> int:
    # Heavy imports here, so other commands and --help skip boto3 and the plan engine.
    from gpucloud import aws as aws_mod
    from gpucloud.aws import AwsAccessError, aws_errors
    from gpucloud.cost import price_plan
    from gpucloud.cost.actual import actual_spend, compare, default_period, stack_filter
    from gpucloud.plan import run_program
    from gpucloud.plan.engine import Project

    program = Path(args.program)
    if not program.is_dir():
        raise CliError(f"--program {args.program} is not a directory")
    start, end = default_period(dt.date.today())
    start, end = args.start or start, args.end or end
    if not start < end:
        raise CliError(f"--start {start} must be before --end {end} (the end day is not included)")
    config = Project(program).config(args.stack)
    plan = run_program(program, args.stack)
    cost = price_plan(plan)
    tags, pods = (_tags(args.tag), {}) if args.tag else stack_allocation(config, plan, args.stack)
    expression = stack_filter(tags, pods)
    try:
        with aws_errors("Cost Explorer"):
            client = aws_mod.default_clients("ce", CE_REGION)
            actual = actual_spend(client, start, end, expression)
    except AwsAccessError as exc:
        raise CliError(str(exc)) from None
    result = compare(cost["monthly"], cost["monthly_ceiling"], actual, start, end)
    result.update({"stack": args.stack, "filter": expression})
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK

    def body(console: Any, table: Any) -> None:
        p = result["period"]
        t = table(f"Cost of stack {args.stack}, {p['start']} .. {p['end']} (end excluded), {result['currency']}")
        t.add_column("")
        t.add_column("amount", justify="right")
        t.add_row("planned (expected, prorated)", f"{result['planned']:,.2f}")
        t.add_row("planned ceiling (prorated)", f"{result['planned_ceiling']:,.2f}")
        t.add_row(
            "actual (Cost Explorer)" + (" (estimated)" if result["estimated"] else ""), f"{result['actual']:,.2f}"
        )
        pct = "" if result["delta_percent"] is None else f" ({result['delta_percent']:+.1f} %)"
        t.add_row("actual - planned", f"{result['delta']:+,.2f}{pct}")
        console.print(t)
        if result["by_service"]:
            s = table("Actual by service")
            s.add_column("service")
            s.add_column("amount", justify="right")
            for service, amount in result["by_service"].items():
                s.add_row(service, f"{amount:,.2f}")
            console.print(s)
        if result["over_ceiling"]:
            console.print("actual spend is above the plan's ceiling: something runs that the plan does not hold")

    print(console_text(body, width=80), end="")
    return EXIT_OK
