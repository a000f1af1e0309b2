"""`gpucloud preflight --stack NAME`: quotas, offerings, spot scores, reservations and AMIs, before `pulumi up`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_AWS_UNAVAILABLE, EXIT_OK, EXIT_PREFLIGHT, CliError
from gpucloud.cli.recommend import console_text

_STYLE = {"pass": "green", "warn": "yellow", "fail": "red"}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "preflight",
        help="check quotas, offerings, spot scores, reservations and AMIs for a stack",
        description="Check a stack's spec against the target AWS account and region (standard boto3 credential "
        "chain): vCPU quotas by name, instance type offerings per AZ, spot placement scores, capacity reservations "
        "and Capacity Blocks, SSM AMI parameters. Exit 3 when a check fails.",
    )
    p.add_argument("--stack", required=True, help="stack name (its stack file holds gpucloud:platform)")
    p.add_argument("--program", default=".", help="Pulumi project directory (default: the current directory)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so that other commands and --help skip boto3 and the plan engine.
    from gpucloud import aws as aws_mod
    from gpucloud.aws import AwsAccessError, AwsUnavailableError
    from gpucloud.plan.engine import Project
    from gpucloud.preflight.checks import run_preflight
    from gpucloud.spec import CONFIG_KEY, CONFIG_NAMESPACE, parse_platform

    program = Path(args.program)
    if not program.is_dir():
        raise CliError(f"--program {args.program} is not a directory")
    project = Project(program)
    config = project.config(args.stack)
    stack_file = project.stack_file(args.stack)
    key = f"{CONFIG_NAMESPACE}:{CONFIG_KEY}"
    if key not in config:
        raise CliError(f"stack '{args.stack}' has no {key} object in its stack file {stack_file}")
    spec = parse_platform(config[key], f"stack '{args.stack}' ({stack_file})", config.get("aws:region"))
    try:
        report = run_preflight(spec, aws_mod.default_clients)
    except AwsAccessError as exc:
        raise CliError(str(exc)) from None
    except AwsUnavailableError as exc:
        raise CliError(str(exc), EXIT_AWS_UNAVAILABLE) from None
    report["stack"] = args.stack
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:

        def body(console: Any, table: Any) -> None:
            t = table(f"Preflight: stack {args.stack}, account {report['account']}, {report['region']}")
            for col in ("check", "subject", "status", "detail"):
                t.add_column(col)
            for c in report["checks"]:
                style = _STYLE[c["status"]]
                t.add_row(c["check"], c["subject"], f"[{style}]{c['status'].upper()}[/{style}]", c["message"])
            console.print(t)
            s = report["summary"]
            console.print(f"{s['pass']} pass, {s['warn']} warn, {s['fail']} fail")

        print(console_text(body), end="")
    return EXIT_OK if report["ok"] else EXIT_PREFLIGHT
