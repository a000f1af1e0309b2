"""scripts/gpu_bench.py on CPU with tiny sizes, compared with the catalog's H100/H200 peaks."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from gpucloud.catalog import get_catalog

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_bench.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_cpu_run_reports_measured_over_catalog_peak(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    rc = bench.main(["--device", "cpu", "--size", "small", "--accelerator", "H200", "--json"])
    assert rc == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["schema"], result["device"], result["accelerator"]) == ("gpucloud.gpu_bench/v1", "cpu", "H200")
    m = result["metrics"]
    assert set(m) == {"bf16_matmul_tflops", "hbm_bandwidth_gbps", "h2d_bandwidth_gbps"}
    assert (m["bf16_matmul_tflops"]["theoretical"], m["hbm_bandwidth_gbps"]["theoretical"]) == (989.0, 4800.0)
    assert m["bf16_matmul_tflops"]["matrix_size"] in (128, 256)
    for name in ("bf16_matmul_tflops", "hbm_bandwidth_gbps"):
        assert m[name]["measured"] > 0
        assert m[name]["ratio"] == pytest.approx(m[name]["measured"] / m[name]["theoretical"], rel=1e-2, abs=1e-4)
    assert m["h2d_bandwidth_gbps"] == {"measured": None, "theoretical": 64.0, "unit": "GB/s", "ratio": None}


def test_cpu_without_accelerator_has_no_theoretical_figures(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--device", "cpu", "--size", "small"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"cpu (no catalog match), torch {__import__('torch').__version__}"
    assert "bf16_matmul_tflops" in out and "/      n/a TFLOPS" in out


def test_bf16_gate_fails_below_the_fraction(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    rc = bench.main(
        ["--device", "cpu", "--size", "small", "--accelerator", "H100", "--json", "--min-bf16-fraction", "0.7"]
    )
    assert rc == 1
    assert json.loads(capsys.readouterr().out)["gate"] == {"min_bf16_fraction": 0.7, "passed": False}


def test_cuda_requested_without_cuda_is_a_usage_error(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--device", "cuda", "--size", "small"]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("device_name", "accelerator"),
    [
        ("NVIDIA H200", "H200"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA A10G", "A10G"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-32GB", "V100-32GB"),
        ("Tesla V100-SXM2-16GB", "V100"),
        ("NVIDIA B200", "B200"),
        ("cpu", None),
    ],
)
def test_device_names_map_to_catalog_accelerators(bench: ModuleType, device_name: str, accelerator: str | None) -> None:
    assert bench.accelerator_for(device_name) == accelerator


def test_every_mapped_accelerator_is_in_the_catalog(bench: ModuleType) -> None:
    in_catalog = {s.accelerator for s in get_catalog()}
    mapped = {acc for _, acc in bench.DEVICE_NAME_TO_ACCELERATOR}
    assert mapped <= in_catalog
    assert bench.catalog_peaks("H100") == {"bf16_tflops": 989.0, "hbm_gbps": 3350.0, "h2d_gbps": 64.0}
