#!/usr/bin/env python3
"""Benchmark `gpucloud plan`: wall time (interpreter start and imports included) for each shipped stack and for
synthetic platforms with 1, 10 and 100 GPU node pools. Prints a Markdown table for docs/performance.md.

Targets (checked here, not in a timed test): the prod stack plans in under 3 s; 100 pools cost no more than 1.2x
the linear extrapolation from 10 pools (the per-pool cost between 1 and 10 pools, measured in one warm interpreter
so that it is not lost in process-start noise; see scaling()); conformance (Helm rendering of the pinned charts
and the checks that read it) adds at most 1.5 s to a prod plan with an empty render cache and at most 0.3 s with
the rendered charts cached (see conformance()).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from bench_record import (
    ALL_SHIPPED_TARGET,
    ALL_SYNTHETIC_TARGET,
    CONFORMANCE_CACHED_TARGET_S,
    CONFORMANCE_COLD_TARGET_S,
    PROD_TARGET_S,
    SCALING_TARGET,
    Machine,
    record,
)

ROOT = Path(__file__).resolve().parents[1]
# `gpucloud plan --all`: the shipped stacks and 3 environment stacks plus SYNTHETIC_TEAMS team stacks.
SYNTHETIC_TEAMS = 20


def synthetic_project(workdir: Path, pools: int) -> Path:
    """A project whose program is the root program and whose one stack has `pools` GPU pools."""
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    platform = doc["config"]["gpucloud:platform"]
    template = platform["nodePools"][0]
    platform["nodePools"] = []
    for i in range(pools):
        pool = copy.deepcopy(template)
        pool["name"] = f"pool-{i:03d}"
        platform["nodePools"].append(pool)
    platform["budget"]["monthlyLimitUsd"] = 10_000_000
    # Sections that name pools must name pools that exist in the synthetic spec.
    fsx = (platform.get("storage") or {}).get("fsx") or {}
    if "feedsPool" in fsx:
        fsx["feedsPool"] = "pool-000"
    sharing = ((platform.get("addons") or {}).get("gpu") or {}).get("timeSlicing")
    if sharing:
        sharing["pools"] = ["pool-000"]
    project = workdir / f"bench-{pools}"
    project.mkdir()
    (project / "Pulumi.yaml").write_text(
        yaml.safe_dump({"name": "gpucloud", "runtime": "python", "main": str(ROOT / "__main__.py")})
    )
    (project / "Pulumi.bench.yaml").write_text(yaml.safe_dump(doc))
    return project


def synthetic_repository(workdir: Path, teams: int) -> Path:
    """A repository with the three environment stacks (the root program) and `teams` team stacks, each a copy
    of the vision team on the dev platform under its own name (the team program, run from this checkout)."""
    repo = workdir / "repo"
    (repo / "stacks" / "teams").mkdir(parents=True)
    (repo / "policies").mkdir()
    shutil.copytree(ROOT / "policies" / "configs", repo / "policies" / "configs")
    (repo / "Pulumi.yaml").write_text(
        yaml.safe_dump(
            {"name": "gpucloud", "runtime": "python", "main": str(ROOT / "__main__.py"), "stackConfigDir": "stacks"}
        )
    )
    for env in ("dev", "staging", "prod"):
        shutil.copy(ROOT / "stacks" / f"Pulumi.{env}.yaml", repo / "stacks")
    vision = yaml.safe_load((ROOT / "stacks" / "teams" / "vision" / "Pulumi.dev.yaml").read_text())
    for i in range(teams):
        name = f"team{i:02d}"
        project = repo / "stacks" / "teams" / name
        project.mkdir()
        main = ROOT / "stacks" / "teams" / "vision" / "__main__.py"
        (project / "Pulumi.yaml").write_text(
            yaml.safe_dump({"name": f"gpucloud-team-{name}", "runtime": "python", "main": str(main)})
        )
        doc = copy.deepcopy(vision)
        team = doc["config"]["gpucloud:team"]
        team.update(name=name, namespace=name)
        team["tags"]["Team"] = name
        (project / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    return repo


def _timed(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds (the process and its helm children) of one CLI run, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gpucloud", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1, 5):
        raise SystemExit(f"gpucloud {' '.join(argv)} failed with {proc.returncode}: {proc.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.returncode


def many_stacks(runs: int, jobs: tuple[int, ...] = (1, 2)) -> dict[str, Any]:
    """`plan --all` against one cold prod plan: the shipped stacks, and 3 environment + 20 synthetic team stacks.

    The cases run interleaved, round by round, so a busy spell on a shared machine hits them alike; medians of
    wall and CPU seconds (CPU, which other load does not inflate, is the cross-check). The shipped stacks run with
    the default jobs; each `jobs` value times the synthetic repository with that many worker processes.
    """
    cases: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        repo = synthetic_repository(Path(tmp), SYNTHETIC_TEAMS)
        out = str(Path(tmp) / "out.json")
        plans = {
            "prod (one stack, cold)": (["plan", "--stack", "prod"], ROOT),
            # The default jobs, as a user runs it (a pool from 2 cores; gpucloud.cli.plan_all.default_jobs).
            "--all: 4 shipped stacks": (["plan", "--all"], ROOT),
            **{
                f"--all: 3 + {SYNTHETIC_TEAMS} team stacks, {n} job{'s' if n > 1 else ''}": (
                    ["plan", "--all", "--jobs", str(n)],
                    repo,
                )
                for n in jobs
            },
        }
        for _ in range(runs):
            for name, (argv, cwd) in plans.items():
                wall, cpu, _code = _timed([*argv, "--format", "json", "--out", out], cwd)
                cases.setdefault(name, []).append((wall, cpu))
    table = {
        name: {"wall_s": statistics.median(w for w, _ in runs_), "cpu_s": statistics.median(c for _, c in runs_)}
        for name, runs_ in cases.items()
    }
    prod = table["prod (one stack, cold)"]
    shipped = table["--all: 4 shipped stacks"]
    synthetic = min((v for k, v in table.items() if "team stacks" in k), key=lambda v: v["wall_s"])
    return {
        "cases": table,
        "runs": runs,
        "shipped_ratio": shipped["wall_s"] / prod["wall_s"],
        "shipped_cpu_ratio": shipped["cpu_s"] / prod["cpu_s"],
        "synthetic_ratio": synthetic["wall_s"] / prod["wall_s"],
        "synthetic_cpu_ratio": synthetic["cpu_s"] / prod["cpu_s"],
    }


def many_stacks_markdown(result: dict[str, Any]) -> str:
    lines = [
        f"| case | wall s (median of {result['runs']}) | CPU s (median) |",
        "|---|--:|--:|",
        *(f"| {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} |" for name, r in result["cases"].items()),
        "",
        f"4 shipped stacks with --all: {result['shipped_ratio']:.2f}x one cold prod plan (CPU "
        f"{result['shipped_cpu_ratio']:.2f}x; target <= {ALL_SHIPPED_TARGET}x); 3 + {SYNTHETIC_TEAMS} stacks: "
        f"{result['synthetic_ratio']:.2f}x (CPU {result['synthetic_cpu_ratio']:.2f}x; target <= "
        f"{ALL_SYNTHETIC_TARGET}x)",
    ]
    return "\n".join(lines)


def many_stacks_ok(result: dict[str, Any]) -> bool:
    return result["shipped_ratio"] <= ALL_SHIPPED_TARGET and result["synthetic_ratio"] <= ALL_SYNTHETIC_TARGET


def time_plan(program: Path, stack: str, runs: int, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    walls = []
    resources = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.json"
        for _ in range(runs):
            start = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "gpucloud.cli",
                    "plan",
                    "--program",
                    str(program),
                    "--stack",
                    stack,
                    "--format",
                    "json",
                    "--out",
                    str(out),
                    *extra,
                ],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                check=False,
            )
            walls.append(time.perf_counter() - start)
            # 1: guardrail violations, 5: conformance errors; the plan itself ran.
            if proc.returncode not in (0, 1, 5):
                raise SystemExit(f"plan of {program} ({stack}) failed with {proc.returncode}: {proc.stderr}")
            resources = len(json.loads(out.read_text())["resources"])
    wall = statistics.median(walls)
    return {"wall_s": wall, "min_s": min(walls), "resources": resources, "resources_per_s": resources / wall}


BREAKDOWN = """
import gc, json, time
t0 = time.perf_counter()
import gpucloud.cli
gc.disable()  # as the gpucloud command (gpucloud.cli.entry) does
from gpucloud.plan import lazy_sdk, run_program
lazy_sdk.install()  # as run_program does, before the components below import the provider SDKs
from gpucloud.report.pipeline import cost_section, policy_section
t1 = time.perf_counter()
import gpucloud.components.platform
t2 = time.perf_counter()
plan = run_program(ROOT, "prod")
t3 = time.perf_counter()
cost = cost_section(plan)
t4 = time.perf_counter()
policy_section(plan, json.loads((Path(ROOT) / "policies/configs/prod.json").read_text()), cost)
t5 = time.perf_counter()
run_program(ROOT, "prod")
t6 = time.perf_counter()
print(json.dumps({"cli_imports_s": t1 - t0, "components_import_s": t2 - t1, "first_run_s": t3 - t2,
                  "cost_s": t4 - t3, "policies_s": t5 - t4, "warm_rerun_s": t6 - t5}))
"""


SCALING = """
import gc, json, sys, time
import gpucloud.cli
gc.set_threshold(*gpucloud.cli.GC_THRESHOLDS)
from gpucloud.plan import run_program
from gpucloud.report.pipeline import build_report
projects, rounds = json.loads(sys.argv[1]), int(sys.argv[2])
for project in projects.values():  # imports and first-use caches, so that only the per-pool work is timed
    run_program(project, "bench")
times = []
for _ in range(rounds):  # one round times every size back to back, so a slow spell hits them alike
    row = {}
    for pools, project in projects.items():
        gc.collect()  # each size starts from a clean heap, as a fresh CLI process does
        start = time.perf_counter()
        build_report(run_program(project, "bench"))
        row[pools] = time.perf_counter() - start
    times.append(row)
print(json.dumps(times))
"""

SCALING_POOLS = (1, 10, 100)

CONFORMANCE = """
import gc, json, resource, sys, time
import gpucloud.cli
gc.disable()  # as the gpucloud command does
from gpucloud.plan import lazy_sdk, run_program
lazy_sdk.install()
from gpucloud.conformance import run_conformance
from gpucloud.report.pipeline import build_report
root, config = sys.argv[1], json.loads(open(sys.argv[2]).read())
plan = run_program(root, "prod")
start = time.perf_counter()
build_report(plan, policy_config=config, conformance=False)
without = time.perf_counter() - start
def cpu():
    own, helm = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, helm.ru_utime + helm.ru_stime
own0, helm0 = cpu()
start = time.perf_counter()
result = run_conformance(plan)
checked = time.perf_counter() - start
own1, helm1 = cpu()
print(json.dumps({"report_without_s": without, "conformance_s": checked, "timings": result.timings,
                  "python_cpu_s": own1 - own0, "helm_cpu_s": helm1 - helm0,
                  "derived": len(result.derived), "findings": len(result.findings)}))
"""


def conformance(rounds: int) -> dict[str, Any]:
    """What conformance adds to a prod plan: with an empty render cache (cold) and with it filled (cached).

    Each round runs two fresh interpreters on one new cache directory ($GPUCLOUD_CACHE_DIR): the first renders
    every chart (cold: no rendered chart and no chart values tree cached), the second reads them back, as the
    next `gpucloud plan` would. Both time `run_conformance` on the recorded plan, after the plan and the report
    without conformance, so process start and the program run are not counted twice. Medians over the rounds.
    """
    cold: list[dict[str, Any]] = []
    cached: list[dict[str, Any]] = []
    config = ROOT / "policies" / "configs" / "prod.json"
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUCLOUD_CACHE_DIR": cache}
            for sink in (cold, cached):
                proc = subprocess.run(
                    [sys.executable, "-c", CONFORMANCE, str(ROOT), str(config)],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                    cwd=ROOT,
                )
                sink.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    checks = sorted({name for run in cold for name in run["timings"]})
    return {
        "cold_s": statistics.median(r["conformance_s"] for r in cold),
        "cached_s": statistics.median(r["conformance_s"] for r in cached),
        "report_without_s": statistics.median(r["report_without_s"] for r in cold + cached),
        # CPU seconds, which a busy machine does not inflate: this process (parsing, the values check, the
        # other checks) and the helm subprocesses. Their sum over the two cores bounds the wall time from below.
        "cold_python_cpu_s": statistics.median(r["python_cpu_s"] for r in cold),
        "cold_helm_cpu_s": statistics.median(r["helm_cpu_s"] for r in cold),
        "cached_python_cpu_s": statistics.median(r["python_cpu_s"] for r in cached),
        "cold_by_check_s": {c: statistics.median(r["timings"].get(c, 0.0) for r in cold) for c in checks},
        "cached_by_check_s": {c: statistics.median(r["timings"].get(c, 0.0) for r in cached) for c in checks},
        "derived_objects": cold[-1]["derived"],
        "findings": cold[-1]["findings"],
        "rounds": rounds,
    }


def scaling(projects: dict[int, Path], rounds: int) -> dict[str, float]:
    """Plan + report times of the 1-, 10- and 100-pool projects in one warm interpreter, and the check.

    A pool costs 10-20 ms, so 1 and 10 pools differ by about 0.15 s: less than the spread of a 3 s process
    start, and about the spread of one warm run on this machine too. So the sizes are timed back to back in
    `rounds` rounds; the per-pool cost is the median over rounds of (t10 - t1) / 9 (paired, so that a slow
    spell cancels out), and t10 and t100 are medians. The line through 10 pools with that slope, taken to
    100 pools, is the linear extrapolation the target compares against.
    """
    proc = subprocess.run(
        [sys.executable, "-c", SCALING, json.dumps({str(n): str(projects[n]) for n in SCALING_POOLS}), str(rounds)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    rows = [{int(n): t for n, t in row.items()} for row in json.loads(proc.stdout.strip().splitlines()[-1])]
    return scaling_summary(rows)


def scaling_summary(rows: list[dict[int, float]]) -> dict[str, float]:
    """Medians of the rounds, the paired per-pool cost, and the extrapolation from 10 pools to 100."""
    per_pool = statistics.median((row[10] - row[1]) / 9 for row in rows)
    t1, t10, t100 = (statistics.median(row[n] for row in rows) for n in SCALING_POOLS)
    predicted = t10 + per_pool * 90
    return {
        "t1": t1,
        "t10": t10,
        "t100": t100,
        "per_pool_s": per_pool,
        "predicted_100_s": predicted,
        "rounds": len(rows),
    }


def breakdown() -> dict[str, float]:
    """Where the prod plan's time goes, measured in a fresh interpreter (imports vs program vs cost/policies)."""
    code = f"from pathlib import Path\nROOT = {str(ROOT)!r}\n" + BREAKDOWN
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs per case; the median is reported")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--breakdown", action="store_true", help="only time the phases of one prod plan")
    parser.add_argument("--prod-only", action="store_true", help="time the shipped stacks, report prod only")
    parser.add_argument(
        "--conformance-only", action="store_true", help="only time what conformance adds to a prod plan"
    )
    parser.add_argument("--all-only", action="store_true", help="only time `gpucloud plan --all` against prod")
    parser.add_argument(
        "--record", action="store_true", help="write docs/bench/plan*.json and the docs' tables (bench_record.py)"
    )
    args = parser.parse_args()
    with Machine() as machine:
        return run(args, machine)


def run(args: argparse.Namespace, machine: Machine) -> int:
    if args.breakdown:
        print(json.dumps(breakdown(), indent=2))
        return 0
    # Byte-compile gpucloud's own modules, as pip does for installed packages and Python does on a first run
    # unless PYTHONDONTWRITEBYTECODE is set (it is on the build machine); otherwise every run would recompile them.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "gpucloud", "components", "policies"], cwd=ROOT, check=True
    )
    if args.all_only:
        many = many_stacks(args.runs)
        if args.record:
            machine.__exit__()
            record("plan-all", many, machine)
        print(json.dumps(many, indent=2) if args.json else many_stacks_markdown(many))
        return 0 if many_stacks_ok(many) else 1
    if args.conformance_only:
        result = conformance(max(args.runs, 3))
        if args.record:
            machine.__exit__()
            record("plan-conformance", result, machine)
        print(json.dumps(result, indent=2))
        ok = result["cold_s"] <= CONFORMANCE_COLD_TARGET_S and result["cached_s"] <= CONFORMANCE_CACHED_TARGET_S
        return 0 if ok else 1

    rows: dict[str, dict[str, Any]] = {}
    for stack in ("dev", "staging", "prod"):
        # As `make plan` runs it: with the stack's policy pack config.
        config = ("--policy-config", str(ROOT / "policies" / "configs" / f"{stack}.json"))
        rows[f"stack {stack}"] = time_plan(ROOT, stack, args.runs, config)
    if args.prod_only:
        print(json.dumps(rows["stack prod"], indent=2))
        return 0 if rows["stack prod"]["wall_s"] < PROD_TARGET_S else 1
    with tempfile.TemporaryDirectory() as tmp:
        projects = {pools: synthetic_project(Path(tmp), pools) for pools in SCALING_POOLS}
        for pools, project in projects.items():
            label = f"synthetic {pools} pool" + ("s" if pools != 1 else "")
            rows[label] = time_plan(project, "bench", args.runs)
        warm = scaling(projects, max(args.runs, 9))
    conf = conformance(max(args.runs, 3))
    many = many_stacks(args.runs)

    predicted_100 = warm["predicted_100_s"]
    checks = {
        "prod_under_3s": rows["stack prod"]["wall_s"] < PROD_TARGET_S,
        "scaling_ratio": warm["t100"] / predicted_100 if predicted_100 > 0 else float("inf"),
        "conformance_cold_ok": conf["cold_s"] <= CONFORMANCE_COLD_TARGET_S,
        "conformance_cached_ok": conf["cached_s"] <= CONFORMANCE_CACHED_TARGET_S,
    }
    checks["scaling_ok"] = checks["scaling_ratio"] <= SCALING_TARGET
    checks["all_stacks_ok"] = many_stacks_ok(many)
    if args.record:
        machine.__exit__()
        record("plan", {"cases": rows, "runs": args.runs, "warm_plan_s": warm}, machine)
        record("plan-conformance", conf, machine)
        record("plan-all", many, machine)
    if args.json:
        result = {
            "cases": rows,
            "warm_plan_s": warm,
            "predicted_100_pools_s": predicted_100,
            "conformance": conf,
            "all_stacks": many,
            "checks": checks,
        }
        print(json.dumps(result, indent=2))
    else:
        print(f"cpu cores: {os.cpu_count()}, python {sys.version.split()[0]}, runs per case: {args.runs} (median)\n")
        print("| case | resources | wall s (median) | wall s (min) | resources/s |")
        print("|---|--:|--:|--:|--:|")
        for name, r in rows.items():
            print(f"| {name} | {r['resources']} | {r['wall_s']:.2f} | {r['min_s']:.2f} | {r['resources_per_s']:.0f} |")
        print(f"\nprod under {PROD_TARGET_S:.0f} s: {'yes' if checks['prod_under_3s'] else 'NO'}")
        print(
            f"\nplan + report in a warm interpreter (medians): 1 pool {warm['t1']:.3f} s, 10 pools "
            f"{warm['t10']:.3f} s, 100 pools {warm['t100']:.3f} s; {warm['per_pool_s'] * 1000:.1f} ms per pool"
        )
        print(
            f"100 pools vs the linear extrapolation from 10 ({predicted_100:.3f} s): "
            f"{checks['scaling_ratio']:.2f}x (target <= {SCALING_TARGET}x)"
        )
        print(
            f"\nconformance on the prod plan ({conf['derived_objects']} derived objects, median of {conf['rounds']}): "
            f"cold {conf['cold_s']:.2f} s (target <= {CONFORMANCE_COLD_TARGET_S} s), cached {conf['cached_s']:.2f} s "
            f"(target <= {CONFORMANCE_CACHED_TARGET_S} s); by check, cold {conf['cold_by_check_s']}, "
            f"cached {conf['cached_by_check_s']}"
        )
        print("\n`gpucloud plan --all`:\n")
        print(many_stacks_markdown(many))
    ok = checks["conformance_cold_ok"] and checks["conformance_cached_ok"] and checks["all_stacks_ok"]
    return 0 if checks["prod_under_3s"] and checks["scaling_ok"] and ok else 1


if __name__ == "__main__":
    sys.exit(main())
