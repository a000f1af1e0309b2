"""`gpucloud plan`: run a Pulumi program offline, price it, evaluate guardrails, and report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import CliError
from gpucloud.cli.io import output_width, read_json, width_arg, write_output
from gpucloud.cli.plan_common import (
    exit_code,
    horizon_arg,
    mix_horizon,
    resolve_policy_config,
    sarif_log,
    timeout_arg,
)

FORMATS = ("text", "json", "markdown", "sarif", "html")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "plan",
        help="plan a stack offline: resources, cost, guardrails",
        description="Run a Pulumi Python program in-process under recording mocks (no credentials, no Pulumi CLI) "
        "and report every resource it would create, its cost and the guardrail verdict.",
    )
    p.add_argument("--stack", help="stack name (default: dev)")
    p.add_argument("--program", default=".", help="Pulumi Python project directory (default: the current directory)")
    p.add_argument(
        "--policy-config",
        metavar="FILE",
        help="policy pack config JSON (as for --policy-pack-config); default: policies/configs/<stack>.json, else "
        "policies/configs/<environment>.json (the spec's environment), found at or above the program",
    )
    p.add_argument("--no-policy-config", action="store_true", help="judge with the pack's defaults, no config")
    from gpucloud.cli.plan_all import register_all_flags

    register_all_flags(p)
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--out", metavar="FILE", help="write the output to FILE instead of stdout")
    p.add_argument(
        "--width",
        type=width_arg,
        metavar="COLUMNS",
        help="text output width (default: the terminal's width, 80 when not a terminal)",
    )
    p.add_argument(
        "--compare",
        metavar="BASE.json",
        help="a base plan (--format json) to diff against: cost, and the change impact "
        "(create / update / replace / "
        "delete per resource, drained GPU nodes, data replaced; see docs/change-impact.md)",
    )
    p.add_argument(
        "--as-of",
        metavar="DATE",
        help="price as of DATE (YYYY-MM-DD; default today): picks EKS standard vs extended support",
    )
    p.add_argument(
        "--mix-horizon",
        type=horizon_arg,
        metavar="MONTHS",
        help="months the mix advice plans each GPU pool for (default: 12); see docs/advisor.md",
    )
    p.add_argument("--no-mix-advice", action="store_true", help="leave out the per-pool capacity-mix advice")
    p.add_argument(
        "--include-estimates",
        action="store_true",
        help="let the mix advice use estimated rates (planning spot and commitment discounts); marked as estimates",
    )
    p.add_argument(
        "--timeout",
        type=timeout_arg,
        metavar="SECONDS",
        help="stop a program still running after SECONDS (exit 2, naming what it waited for); default: "
        "$GPUCLOUD_PLAN_TIMEOUT, else 120",
    )
    p.set_defaults(func=run)


def _load_compare(path: str) -> dict[str, Any]:
    import jsonschema

    from gpucloud.report import SCHEMA, validate_report

    base = read_json(path, "--compare")
    if not isinstance(base, dict) or base.get("schema") != SCHEMA:
        raise CliError(f'--compare file {path} is not a gpucloud plan JSON (expected "schema": "{SCHEMA}")')
    try:
        validate_report(base)
    except jsonschema.ValidationError as exc:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.absolute_path) or "(top level)"
        raise CliError(
            f"--compare file {path}: {where.lstrip('.')}: {exc.message}; the base must follow "
            f"gpucloud/report/plan.schema.json (write it with gpucloud plan --format json)"
        ) from None
    return base


def run(args: argparse.Namespace) -> int:
    # Imported here so that other commands and --help skip the plan engine and the provider SDKs.
    from gpucloud.cli.plan_all import multi_stack, run_all
    from gpucloud.plan import run_program
    from gpucloud.report.pipeline import build_report

    if multi_stack(args):
        return run_all(args)
    program = Path(args.program)
    if not program.is_dir():
        raise CliError(f"--program {args.program} is not a directory")
    stack = args.stack or "dev"
    policy_config, policy_source = resolve_policy_config(args, program, stack)
    compare = _load_compare(args.compare) if args.compare else None
    horizon = mix_horizon(args)
    as_of = _as_of(args.as_of) if getattr(args, "as_of", None) else None
    plan = run_program(program, stack, timeout=getattr(args, "timeout", None))
    if as_of is not None:
        plan.config[_PRICING_KEY] = {**(plan.config.get(_PRICING_KEY) or {}), "asOf": as_of}
    from gpucloud.impact import ImpactConfigError

    try:
        report = build_report(
            plan,
            policy_config=policy_config,
            compare=compare,
            mix_horizon=horizon,
            include_estimates=bool(getattr(args, "include_estimates", False)),
        )
    except ImpactConfigError as exc:
        raise CliError(f"stack {stack}: {exc}") from None
    report["policy_config"] = policy_source
    if args.format == "json":
        text = json.dumps(report, indent=2, sort_keys=False) + "\n"
    elif args.format == "markdown":
        from gpucloud.report.render import render_markdown

        text = render_markdown(report)
    elif args.format == "sarif":
        text = _sarif(report)
    elif args.format == "html":
        from gpucloud.report.visual import render_html

        text = render_html(report)
    else:
        from gpucloud.report.render import render_text  # rich: only the text format needs it

        to_file = args.out not in (None, "-")
        text = render_text(report, width=output_width(args.width, to_file), color=not to_file and sys.stdout.isatty())
    write_output(text, args.out)
    return exit_code(report)


_PRICING_KEY = "gpucloud:pricing"


def _as_of(value: str) -> str:
    from datetime import date

    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise CliError(f"--as-of {value!r} is not a date; give YYYY-MM-DD, e.g. --as-of 2026-12-15") from None


def _sarif(report: dict[str, Any]) -> str:
    return json.dumps(sarif_log(report), indent=2) + "\n"
