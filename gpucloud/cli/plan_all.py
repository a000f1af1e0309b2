"""`gpucloud plan --all | --changed BASE | --shard I/N`: plan many stacks of a repository in one process.

One process, so the provider SDKs, the planner and the conformance checks are imported once and their caches
(rendered charts, verdict store) are warm for every stack after the first. Stacks run in dependency order
(gpucloud.stacks.discovery). The result is one combined report per format and one exit code: the worst of
the stacks' codes, ranked internal error > invalid input > conformance errors > mandatory violations > ok.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import (
    EXIT_CONFORMANCE,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_PREFLIGHT,
    EXIT_VIOLATIONS,
    CliError,
)
from gpucloud.cli.io import output_width, write_output

COMBINED_SCHEMA = "gpucloud.plans/v1"
# A pool pays from 2 cores: the first stack (the cheapest, see warm_order) warms the imports in this process, then
# forked workers share the rest; on an idle 2-core machine 2 jobs planned 3 + 20 stacks in 8.7 s against 13.1 s
# with one, and the 4 shipped stacks in about the time of one cold prod plan (docs/performance.md).
POOL_MIN_CORES = 2
# Below this many stacks the fork and the idle first stack cost more than the overlap wins.
POOL_MIN_STACKS = 3
POOL_MAX_JOBS = 8
# Worst first: what the combined exit code is when stacks disagree.
SEVERITY = (EXIT_INTERNAL, EXIT_INVALID, EXIT_PREFLIGHT, EXIT_CONFORMANCE, EXIT_VIOLATIONS, EXIT_OK)


def register_all_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("many stacks (one process, one combined report, the worst exit code)")
    g.add_argument("--all", action="store_true", help="plan every stack of the repository (see `gpucloud stacks`)")
    g.add_argument("--changed", metavar="BASE", help="plan only the stacks `git diff BASE` can affect")
    g.add_argument("--shard", metavar="I/N", help="plan only shard I of N (CI matrices; deterministic)")
    g.add_argument("--root", default=".", help="repository root to find stacks under (default: .)")
    g.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes, forked after the cheapest stack warmed the imports and caches (default: the "
        f"cores this process may run on, at most {POOL_MAX_JOBS}; 1 on a single core)",
    )


def multi_stack(args: argparse.Namespace) -> bool:
    if not (args.all or args.changed or args.shard):
        if args.jobs is not None:
            raise CliError("--jobs applies to --all/--changed/--shard only")
        return False
    for flag, value in (("--stack", args.stack), ("--compare", args.compare), ("--policy-config", args.policy_config)):
        if value:
            raise CliError(
                f"{flag} names one stack's input and cannot be combined with --all/--changed/--shard; each stack "
                "gets its own policies/configs/<stack>.json (or --no-policy-config for none)"
            )
    if args.program != ".":
        raise CliError("--program selects one project; with --all/--changed/--shard use --root DIR for the repository")
    return True


@dataclass
class StackResult:
    info: Any
    exit_code: int
    seconds: float
    policy_config: str
    report: dict[str, Any] | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.info.to_json(),
            "policy_config": self.policy_config,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
        }
        if self.error is not None:
            out["error"] = self.error
        if self.report is not None:
            out["report"] = self.report
        return out


def worst(codes: list[int]) -> int:
    """The combined exit code: the most severe of the stacks' codes (an unknown code ranks as internal)."""
    rank = {code: i for i, code in enumerate(SEVERITY)}
    return min(codes, key=lambda c: rank.get(c, -1), default=EXIT_OK)


def select_stacks(args: argparse.Namespace) -> tuple[Path, list[Any]]:
    from gpucloud.stacks.changed import affected, git_changed
    from gpucloud.stacks.discovery import discover
    from gpucloud.stacks.shard import parse_shard, shard

    root = Path(args.root)
    if not root.is_dir():
        raise CliError(f"--root {args.root} is not a directory")
    shard_spec = parse_shard(args.shard) if args.shard else None
    stacks = discover(root)
    if args.changed:
        stacks = affected(root, stacks, git_changed(root, args.changed))
    if shard_spec is not None:
        stacks = shard(stacks, *shard_spec)
    return root, stacks


def plan_stack(root: Path, info: Any, args: argparse.Namespace) -> StackResult:
    """One stack's report and exit code; bad input in one stack is that stack's result, not the run's end."""
    from gpucloud.cli.plan_common import exit_code, mix_horizon, resolve_policy_config
    from gpucloud.plan import run_program
    from gpucloud.report.pipeline import build_report

    started = time.perf_counter()
    program = root / info.program
    source = "none"
    try:
        policy_config, source = resolve_policy_config(args, program, info.stack)
        plan = run_program(program, info.stack, timeout=getattr(args, "timeout", None))
        report = build_report(
            plan,
            policy_config=policy_config,
            mix_horizon=mix_horizon(args),
            include_estimates=bool(getattr(args, "include_estimates", False)),
        )
        report["policy_config"] = source
        return StackResult(info, exit_code(report), time.perf_counter() - started, source, report=report)
    except CliError as exc:
        return StackResult(info, exc.exit_code, time.perf_counter() - started, source, error=str(exc))
    except Exception as exc:
        from gpucloud.cli import _input_error

        if _input_error(exc):
            return StackResult(info, EXIT_INVALID, time.perf_counter() - started, source, error=str(exc))
        message = f"internal error: {type(exc).__name__}: {exc}"
        return StackResult(info, EXIT_INTERNAL, time.perf_counter() - started, source, error=message)


def usable_cores() -> int | None:
    """The cores this process may run on (its CPU affinity: a container or `taskset` can give fewer than the
    machine has), or None when the platform cannot tell."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no sched_getaffinity (macOS)
        return os.cpu_count()


def default_jobs(cores: int | None) -> int:
    if cores is None or cores < POOL_MIN_CORES:
        return 1
    return min(cores, POOL_MAX_JOBS)


def cost_estimate(root: Path, info: Any) -> tuple[int, int]:
    """How expensive a stack's plan is likely to be, comparable between stacks, from what is known before it runs.

    A stack that reads another through StackReference (a team stack on its platform) builds on that stack and
    plans far fewer resources than it (vision: 0.45 s warm against 0.8-1.9 s for the environment stacks);
    among stacks of the same kind a longer stack file means more pools and add-ons (prod 5.7 kB: 1.9 s, dev and
    staging 2.6 kB: 0.8 s)."""
    try:
        size = (root / info.stack_file).stat().st_size
    except OSError:  # planning it reports the missing file; order does not matter for that
        size = 0
    return (0 if info.references else 1, size)


def warm_order(root: Path, stacks: list[Any]) -> list[int]:
    """The order a pool plans the stacks in (indices into `stacks`): the cheapest first, in this process, because
    every worker waits for it and then inherits the imports it loaded; the rest longest first, so that the large
    stacks start early and the small ones fill the gaps at the end (the combined report keeps `stacks`' order)."""
    estimates = [cost_estimate(root, info) for info in stacks]
    first = min(range(len(stacks)), key=lambda i: (estimates[i], i))
    rest = sorted((i for i in range(len(stacks)) if i != first), key=lambda i: (estimates[i], -i), reverse=True)
    return [first, *rest]


# What a forked worker plans with: set in the parent before the fork, so nothing is pickled but the stacks.
_WORKER: dict[str, Any] = {}


def _plan_in_worker(job: tuple[int, Any]) -> tuple[int, StackResult]:
    index, info = job
    return index, plan_stack(_WORKER["root"], info, _WORKER["args"])


def plan_many(root: Path, stacks: list[Any], args: argparse.Namespace, jobs: int) -> list[StackResult]:
    """Plan the stacks; with jobs > 1 (and enough stacks), the cheapest in this process (it imports the SDKs and
    fills the caches) and the rest in forked workers that inherit all of that. Results keep the stacks' order."""
    if jobs <= 1 or len(stacks) < POOL_MIN_STACKS:
        return [plan_stack(root, info, args) for info in stacks]
    import multiprocessing

    first, *rest = warm_order(root, stacks)
    results: dict[int, StackResult] = {first: plan_stack(root, stacks[first], args)}
    _WORKER.update(root=root, args=args)
    wait = worker_wait_seconds(args)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(rest))) as pool:
            # One stack per task, handed out in `rest`'s order as workers free up.
            done = pool.imap_unordered(_plan_in_worker, [(i, stacks[i]) for i in rest], chunksize=1)
            while len(results) < len(stacks):
                try:
                    index, result = done.next(timeout=wait)
                except multiprocessing.TimeoutError:
                    # A forked child inherits the parent's locks as they were at the fork; one held by another
                    # thread then never comes free, and the child waits forever. No result for longer than a plan
                    # may take (its own deadline bounds the program) means a worker is stuck: drop the pool and
                    # plan what is left here, so the run ends either way.
                    pool.terminate()
                    left = [i for i in rest if i not in results]
                    print(
                        f"gpucloud: no worker finished a stack in {wait:.0f} s; planning the {len(left)} stack(s) "
                        "left in this process",
                        file=sys.stderr,
                    )
                    for i in left:
                        results[i] = plan_stack(root, stacks[i], args)
                    break
                except StopIteration:
                    break
                results[index] = result
    finally:
        _WORKER.clear()
    return [results[i] for i in range(len(stacks))]


# How long the pool waits for the next finished stack before it calls a worker stuck: the program's own deadline
# (gpucloud.plan.deadline, --timeout) bounds a plan, and conformance and pricing come on top of it.
WORKER_WAIT_FLOOR_S = 300.0


def worker_wait_seconds(args: argparse.Namespace) -> float:
    from gpucloud.plan.deadline import resolve_timeout

    return max(WORKER_WAIT_FLOOR_S, 2 * resolve_timeout(getattr(args, "timeout", None)))


def run_all(args: argparse.Namespace) -> int:
    root, stacks = select_stacks(args)
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs {args.jobs}: give 1 or more worker processes")
    jobs = args.jobs if args.jobs is not None else default_jobs(usable_cores())
    if args.format == "html":
        raise CliError("--format html is one stack's report; plan each stack with --stack, or use markdown with --all")
    results = plan_many(root, stacks, args, jobs)
    combined = combine(results)
    if args.format == "json":
        text = json.dumps(combined, indent=2) + "\n"
    elif args.format == "sarif":
        text = json.dumps(combined_sarif(results), indent=2) + "\n"
    elif args.format == "markdown":
        text = combined_markdown(results, combined)
    else:
        to_file = args.out not in (None, "-")
        width = output_width(getattr(args, "width", None), to_file)
        text = combined_text(results, combined, color=not to_file and sys.stdout.isatty(), width=width)
    write_output(text, args.out)
    code: int = combined["exit_code"]
    return code


def combine(results: list[StackResult]) -> dict[str, Any]:
    """The combined JSON object (documented as `$defs.plans` in gpucloud/report/plan.schema.json)."""
    reports = [r.report for r in results if r.report is not None]
    return {
        "schema": COMBINED_SCHEMA,
        "exit_code": worst([r.exit_code for r in results]),
        "summary": {
            "stacks": len(results),
            "failed": sum(1 for r in results if r.exit_code != EXIT_OK),
            "monthly": round(sum(float(r["cost"]["monthly"]) for r in reports), 2),
            "monthly_ceiling": round(sum(float(r["cost"]["monthly_ceiling"]) for r in reports), 2),
            "mandatory_violations": sum(int(r["policies"]["mandatory_violations"]) for r in reports),
            "conformance_errors": sum(int((r.get("conformance") or {}).get("errors", 0)) for r in reports),
            **_mix_summary(reports),
        },
        "stacks": [r.to_json() for r in results],
    }


def _mix_summary(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The stacks' capacity-mix savings added up (each stack's advice uses the same --mix-horizon); None when no
    stack carries advice (--no-mix-advice, or every stack failed)."""
    advice = [r["mix_advice"] for r in reports if r.get("mix_advice") is not None]
    if not advice:
        return {"mix_saving_usd": None, "mix_horizon_months": None, "mix_pools_advised": 0}
    return {
        "mix_saving_usd": round(sum(float(a["saving_usd"]) for a in advice), 2),
        "mix_horizon_months": advice[0]["horizon_months"],
        "mix_pools_advised": sum(int(a["advised"]) for a in advice),
    }


def _mix_line(summary: dict[str, Any]) -> str | None:
    """The summary's one line on capacity-mix savings; none when no pool anywhere has advice (nothing to say)."""
    if summary.get("mix_saving_usd") is None or not summary.get("mix_pools_advised"):
        return None
    months = summary["mix_horizon_months"]
    return (
        f"capacity-mix advice: ${summary['mix_saving_usd']:,.2f} saved over {months:g} months "
        f"({summary['mix_pools_advised']} pools advised)"
    )


def _summary_rows(results: list[StackResult]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in results:
        rep = r.report
        rows.append(
            (
                r.info.id,
                r.info.stack_file,
                str(r.exit_code),
                f"${rep['cost']['monthly']:,.2f}" if rep else "-",
                str(rep["policies"]["mandatory_violations"]) if rep else "-",
                str((rep.get("conformance") or {}).get("errors", 0)) if rep else "-",
            )
        )
    return rows


HEADERS = ("stack", "stack file", "exit", "monthly", "mandatory", "conformance errors")


def combined_text(results: list[StackResult], combined: dict[str, Any], color: bool = False, width: int = 80) -> str:
    from gpucloud.report.render import render_text

    parts = []
    for r in results:
        parts.append(f"=== {r.info.id} ({r.info.stack_file}; policy config: {r.policy_config}) exit {r.exit_code}\n")
        if r.report is not None:
            parts.append(render_text(r.report, width=width, color=color))
        else:
            parts.append(f"gpucloud: error: {r.error}\n")
        parts.append("\n")
    # The stack file is in each stack's "===" line above; leaving it out keeps the table inside 80 columns.
    rows = [row[:1] + row[2:] for row in (HEADERS, *_summary_rows(results))]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    parts.append(f"=== {len(results)} stacks, exit {combined['exit_code']}\n")
    for row in rows:
        parts.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n")
    mix = _mix_line(combined["summary"])
    if mix is not None:
        parts.append(mix + "\n")
    return "".join(parts)


def combined_markdown(results: list[StackResult], combined: dict[str, Any]) -> str:
    from gpucloud.report.render import render_markdown

    s = combined["summary"]
    lines = [
        f"## gpucloud plan: {s['stacks']} stacks, exit {combined['exit_code']}",
        "",
        f"Monthly ${s['monthly']:,.2f} (ceiling ${s['monthly_ceiling']:,.2f}); "
        f"{s['mandatory_violations']} mandatory violations; {s['conformance_errors']} conformance errors."
        + (f" {mix[0].upper()}{mix[1:]}." if (mix := _mix_line(s)) else ""),
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
        *("| " + " | ".join(row) + " |" for row in _summary_rows(results)),
        "",
    ]
    for r in results:
        lines += [f"<details><summary>{r.info.id}: exit {r.exit_code}</summary>", ""]
        lines.append(render_markdown(r.report).rstrip("\n") if r.report is not None else f"**error:** {r.error}")
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def combined_sarif(results: list[StackResult]) -> dict[str, Any]:
    """One SARIF log, each stack's runs in it (their automationDetails ids differ per stack), results pinned to
    the stack file."""
    from gpucloud.cli.plan_common import sarif_log

    runs: list[dict[str, Any]] = []
    log: dict[str, Any] = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0"}
    for r in results:
        if r.report is None:
            continue
        one = sarif_log(r.report, artifact_uri=r.info.stack_file)
        log["$schema"], log["version"] = one["$schema"], one["version"]
        runs.extend(one["runs"])
    log["runs"] = runs
    return log
