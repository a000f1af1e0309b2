"""`gpucloud` command line. Exit codes: 0 ok, 1 mandatory policy violations, 2 invalid input, 3 preflight
failure, 4 internal error, 5 conformance errors, 6 AWS unavailable after the retries. Bad input prints one
message, never a traceback."""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from gpucloud import __version__
from gpucloud.cli import cost as cost_cmd
from gpucloud.cli import images as images_cmd
from gpucloud.cli import mix as mix_cmd
from gpucloud.cli import new as new_cmd
from gpucloud.cli import pack as pack_cmd
from gpucloud.cli import plan as plan_cmd
from gpucloud.cli import preflight as preflight_cmd
from gpucloud.cli import prices as prices_cmd
from gpucloud.cli import recommend as recommend_cmd
from gpucloud.cli import stacks as stacks_cmd
from gpucloud.cli import tools as tools_cmd
from gpucloud.cli import upgrade as upgrade_cmd
from gpucloud.cli import versions as versions_cmd
from gpucloud.cli.errors import EXIT_INTERNAL, EXIT_INVALID, CliError

# Each sub-command module exposes register(subparsers); its parser sets `func(args) -> int`. The modules import
# their heavy dependencies (the plan engine, provider SDKs, rich) inside `func`, so `--help` and the light
# commands do not pay for what `plan` needs.
COMMANDS = [
    plan_cmd,
    recommend_cmd,
    mix_cmd,
    preflight_cmd,
    prices_cmd,
    cost_cmd,
    stacks_cmd,
    new_cmd,
    pack_cmd,
    tools_cmd,
    upgrade_cmd,
    versions_cmd,
    images_cmd,
]

# Input errors raised below the CLI, by module: printed as one message with exit 2. Looked up in sys.modules
# rather than imported, because a class whose module was never imported cannot have been raised.
INPUT_ERRORS = (
    ("gpucloud.plan.engine", "PlanInputError"),
    ("gpucloud.spec.errors", "SpecError"),
    ("gpucloud.guard.config", "PolicyConfigError"),
    ("gpucloud.plan.options", "StackOptionError"),
)

# Collector thresholds for one command. The provider SDKs' generated modules allocate about a million
# long-lived objects while `plan` imports them; with the default thresholds (700, 10, 10) the cyclic collector
# rescans that growing heap hundreds of times, which was 2 s of a 6.7 s prod plan. A command's garbage is
# mostly acyclic (freed by reference counting), so collecting every 100,000 allocations keeps memory the same
# (prod plan peak RSS 200 MB either way) at a fraction of the cost. Same idea as mypy's gc.set_threshold.
GC_THRESHOLDS = (100_000, 50, 100)


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


@contextmanager
def _collect_rarely() -> Iterator[None]:
    """Raise the collector thresholds for the command, then restore them (tests call main() in-process)."""
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _input_error(exc: Exception) -> bool:
    for module_name, class_name in INPUT_ERRORS:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(exc, getattr(module, class_name)):
            return True
    return False


def _clean_leftovers() -> None:
    """What killed gpucloud processes left (helm scratch directories, half-written cache entries), removed at the
    next start; a few directory listings, and never a reason to fail the command."""
    from gpucloud.filecache import cache_dir
    from gpucloud.fileio import clean_stale
    from gpucloud.prices.cache import cache_path

    try:
        # The caches' root (derived, helm, verdicts, and by default botocore) and the price cache's folder.
        root = cache_dir().parent
        directories = [root, *(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []
        prices = cache_path()
        if prices is not None and prices.parent not in directories:
            directories.append(prices.parent)
        clean_stale(directories)
    except OSError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (tests call this in-process)."""
    with _collect_rarely(), warnings.catch_warnings():
        return _main(argv)


def _show_warning(message: Warning | str, category: type[Warning], *_args: object, **_kwargs: object) -> None:
    # A warning is a message for the user like any other: one line in the house style, not Python's
    # "file.py:123: UserWarning:" with the source line under it.
    print(f"gpucloud: warning: {message}", file=sys.stderr)


def entry() -> NoReturn:
    """The `gpucloud` console script and `python -m gpucloud.cli`: one command, then exit without teardown."""
    one_shot(lambda: _main(None))


def one_shot(run: Callable[[], int]) -> NoReturn:
    """Run `run` as the `gpucloud` command runs, then leave the process with its exit code.

    A one-shot process does not need the cyclic collector at all: even at main()'s thresholds it spent 0.13 s
    of a prod plan scanning, and restoring them at the end set off one more pass over everything the plan
    imported (0.3 s). Without it the prod plan peaks at 133 MB, as with it, and a 100-pool plan at 165 MB
    against 163 MB: what a plan allocates is freed by reference counting. Tearing down the imported modules
    (pulumi_aws, pulumi_kubernetes) took another second after all output was written, so, like mypy, flush
    the standard streams and leave with os._exit; atexit handlers run first. Other one-process runs of the
    planner (scripts/bench_checkov.py's worker) use this too, so they run as the command does.
    """
    gc.disable()
    code = run()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (gpucloud plan | head): the reader is gone, nothing to flush to
        code = code or EXIT_INTERNAL
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    # A failed program leaves SDK coroutines that Python reports at exit; the error message already says it all.
    warnings.filterwarnings("ignore", category=RuntimeWarning, message="coroutine .* was never awaited")
    warnings.showwarning = _show_warning
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage and the problem
        return EXIT_INVALID if exc.code not in (0, None) else 0
    _clean_leftovers()
    try:
        code: int = args.func(args)
        return code
    except CliError as exc:
        print(f"gpucloud: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if _input_error(exc):
            print(f"gpucloud: error: {exc}", file=sys.stderr)
            return EXIT_INVALID
        if os.environ.get("GPUCLOUD_DEBUG"):
            traceback.print_exc()
        print(
            f"gpucloud: internal error: {type(exc).__name__}: {exc} (set GPUCLOUD_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    entry()
