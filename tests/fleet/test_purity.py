"""The fleet layer is pure (no Pulumi, no plan engine, no reader above it), and the OpenCost export reads rates
without loading the cost engine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _loaded(module: str) -> list[str]:
    code = (
        f"import json, sys, {module}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'pulumi' or m.startswith("
        "('pulumi_', 'gpucloud.plan', 'gpucloud.cost', 'gpucloud.conformance', 'gpucloud.advisor')))))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return list(json.loads(out))


def test_the_fleet_layer_imports_no_pulumi_and_no_reader() -> None:
    assert _loaded("gpucloud.fleet") == []


def test_the_opencost_export_does_not_load_the_cost_engine() -> None:
    loaded = _loaded("gpucloud.components.addons.cost_allocation")
    assert [m for m in loaded if m.startswith(("gpucloud.cost", "gpucloud.plan", "gpucloud.conformance"))] == []
