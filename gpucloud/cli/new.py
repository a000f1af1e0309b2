"""`gpucloud new team NAME`: a team stack project of its own (gpucloud/templates)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_OK, CliError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "new",
        help="write a new project from a template (team stack)",
        description="Write a project from one of gpucloud's templates. `team NAME` writes a team stack project: "
        "Pulumi.yaml, requirements.txt pinning this gpucloud, Pulumi.<environment>.yaml, the program, a CI "
        "workflow running `gpucloud plan` and the policy pack, a README. It plans clean as written "
        "(docs/team-stacks.md).",
    )
    kinds = p.add_subparsers(dest="template", metavar="TEMPLATE")
    kinds.required = True
    team = kinds.add_parser("team", help="a team stack on a shared gpucloud platform")
    team.add_argument("name", help="team name: a lowercase DNS label, e.g. vision")
    team.add_argument("--dir", help="directory to write (new or empty; default: ./<name>)")
    team.add_argument(
        "--environment", choices=("dev", "staging", "prod"), default="dev", help="platform environment (default dev)"
    )
    team.set_defaults(func=run_team)


def run_team(args: argparse.Namespace) -> int:
    from gpucloud.templates import TemplateError, write_team

    dest = Path(args.dir or args.name)
    try:
        written = write_team(dest, args.name, args.environment)
    except TemplateError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write the project into {dest}: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    print(
        f"next: cd {dest} && python -m venv .venv && .venv/bin/pip install -r requirements.txt && "
        f".venv/bin/gpucloud plan --stack {args.environment}",
        file=sys.stderr,
    )
    return EXIT_OK
