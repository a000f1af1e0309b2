"""`gpucloud` command line. Exit codes: 0 ok, 1 mandatory policy violations, 2 invalid input, 3 preflight
failure, 4 internal error. Bad input prints one message, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

from gpucloud import __version__
from gpucloud.cli import mix as mix_cmd
from gpucloud.cli import plan as plan_cmd
from gpucloud.cli import preflight as preflight_cmd
from gpucloud.cli import prices as prices_cmd
from gpucloud.cli import recommend as recommend_cmd
from gpucloud.cli.errors import EXIT_INTERNAL, EXIT_INVALID, CliError
from gpucloud.guard.config import PolicyConfigError
from gpucloud.plan.engine import PlanInputError
from gpucloud.spec.errors import SpecError

# Each sub-command module exposes register(subparsers); its parser sets `func(args) -> int`.
COMMANDS = [plan_cmd, recommend_cmd, mix_cmd, preflight_cmd, prices_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpucloud",
        description="GPU platforms on AWS with Pulumi: offline plans, cost, guardrails, capacity advice.",
    )
    parser.add_argument("--version", action="version", version=f"gpucloud {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # A failed program leaves SDK coroutines that Python reports at exit; the error message already says it all.
    warnings.filterwarnings("ignore", category=RuntimeWarning, message="coroutine .* was never awaited")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage and the problem
        return EXIT_INVALID if exc.code not in (0, None) else 0
    try:
        code: int = args.func(args)
        return code
    except (CliError, PlanInputError, SpecError, PolicyConfigError) as exc:
        print(f"gpucloud: error: {exc}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, CliError) else EXIT_INVALID
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("GPUCLOUD_DEBUG"):
            traceback.print_exc()
        print(
            f"gpucloud: internal error: {type(exc).__name__}: {exc} (set GPUCLOUD_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
