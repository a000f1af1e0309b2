"""The pack's mandatory violations on the foreign-program corpus, and how many of them are false.

Plans every program of tests/fixtures/corpus as tests/plan/test_foreign_corpus.py does (the CLI, pack defaults, no
policy config), lists each mandatory violation as "policy resource", and scores them against the reviewed verdicts
in tests/fixtures/corpus/policy_review.json (a verdict per policy, and the violations reviewed as false, each with
why). `--write` records the lists in expected.json ("violations", with the count and the exit code), which the
corpus test then holds.

    PYTHONPATH=. python scripts/corpus_review.py [--write] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
EXPECTED = CORPUS / "expected.json"
REVIEW = CORPUS / "policy_review.json"


def mandatory(report: dict[str, Any]) -> list[str]:
    """Sorted "policy resource" of each mandatory violation (decided or undecided) in a plan report."""
    out = []
    for v in report.get("policies", {}).get("violations", []):
        if v.get("enforcement") == "mandatory":
            out.append(f"{v['policy']} {str(v.get('urn') or '').rsplit('::', 1)[-1]}")
    return sorted(out)


def plan(program: str, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    cmd = [sys.executable, "-m", "gpucloud", "plan", "--program", str(CORPUS / program), "--stack", "corpus"]
    cmd += ["--no-policy-config", "--format", "json", "--no-mix-advice"]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, **env}, check=False
    )
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.exit(f"{program}: exit {done.returncode} without a JSON report:\n{done.stderr[-2000:]}")
    return done.returncode, report


def score(found: dict[str, list[str]], review: dict[str, Any]) -> tuple[int, list[str], list[str]]:
    """(total, the violations reviewed as false, the policies without a verdict)."""
    total = sum(len(v) for v in found.values())
    false = [f"{p} {v}" for p, vs in sorted(found.items()) for v in vs if f"{p} {v}" in review["false"]]
    unreviewed = sorted({v.split(" ", 1)[0] for vs in found.values() for v in vs} - set(review["policies"]))
    return total, false, unreviewed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the violations in expected.json")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    expected: dict[str, dict[str, Any]] = json.loads(EXPECTED.read_text())
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = dict(zip(expected, pool.map(lambda p: plan(p, expected[p].get("env", {})), expected), strict=True))
    found = {p: mandatory(r) for p, (_, r) in runs.items()}
    review = json.loads(REVIEW.read_text())
    total, false, unreviewed = score(found, review)
    per_policy = Counter(v.split(" ", 1)[0] for vs in found.values() for v in vs)
    for policy, n in per_policy.most_common():
        print(f"{n:4d}  {policy}")
    print(
        f"{total} mandatory violations on {len(found)} programs; {len(false)} reviewed false "
        f"({100 * len(false) / max(total, 1):.1f} %)"
    )
    for item in false:
        print(f"  false: {item}: {review['false'][item]}")
    if unreviewed:
        print(f"policies without a verdict in {REVIEW.name}: {unreviewed}")
    if args.write:
        from gpucloud.fileio import write_atomic

        for program, items in found.items():
            # The count and the exit code follow the reviewed list (exit 1 with mandatory violations, 5 with
            # conformance errors, which the corpus test holds separately).
            expected[program]["violations"] = items
            expected[program]["mandatory"] = len(items)
            expected[program]["exit"] = runs[program][0]
        write_atomic(EXPECTED, json.dumps(expected, indent=1, sort_keys=True) + "\n")
    return 1 if unreviewed else 0


if __name__ == "__main__":
    raise SystemExit(main())
