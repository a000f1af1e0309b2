"""scripts/bench_plan.py: the synthetic projects plan, and the scaling check does its arithmetic right."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from gpucloud.plan import run_program

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> Any:
    # The benches import their shared recorder (scripts/bench_record.py) as a sibling module.
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("bench_plan", ROOT / "scripts" / "bench_plan.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_plan"] = module
    spec.loader.exec_module(module)
    return module


def test_scaling_summary_pairs_rounds_and_extrapolates_from_ten() -> None:
    bench = _bench()
    rows = [
        {1: 1.0, 10: 1.9, 100: 10.9},
        {1: 1.2, 10: 2.1, 100: 11.0},
        {1: 5.0, 10: 5.9, 100: 15.0},  # a slow spell: the pair still says 0.1 s a pool
    ]
    summary = bench.scaling_summary(rows)
    assert summary["per_pool_s"] == pytest.approx(0.1)
    assert (summary["t1"], summary["t10"], summary["t100"]) == (1.2, 2.1, 11.0)
    assert summary["predicted_100_s"] == pytest.approx(2.1 + 0.1 * 90)


def test_synthetic_projects_plan_with_three_resources_per_pool(tmp_path: Path) -> None:
    bench = _bench()
    counts = {}
    for pools in (1, 3):
        project = bench.synthetic_project(tmp_path, pools)
        counts[pools] = len(run_program(project, "bench").resources)
    assert counts == {1: 184, 3: 192}  # the dev stack with metrics-server, Kueue and the LB controller
