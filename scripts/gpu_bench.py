#!/usr/bin/env python3
"""GPU acceptance benchmark: bf16 matmul TFLOPS, HBM bandwidth and host-to-device bandwidth, each compared with
the peak the gpucloud catalog lists for the accelerator (datasheet and measured figures differ; this says by how
much on this node).

    python scripts/gpu_bench.py --device cuda --json          # a GPU node, about a minute
    python scripts/gpu_bench.py --device cpu --size small     # smoke test anywhere

Exit status 1 when --min-bf16-fraction is given and the measured bf16 TFLOPS fall below that share of the peak
(an acceptance gate for new nodes), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent

# torch.cuda.get_device_name() -> catalog accelerator. Checked in order: longer, more specific names first.
DEVICE_NAME_TO_ACCELERATOR: tuple[tuple[str, str], ...] = (
    ("B300", "B300"),
    ("B200", "B200"),
    ("H200", "H200"),
    ("H100", "H100"),
    ("A100-SXM4-80GB", "A100-80GB"),
    ("A100 80GB", "A100-80GB"),
    ("A100-SXM4-40GB", "A100-40GB"),
    ("A100", "A100-40GB"),
    ("L40S", "L40S"),
    ("A10G", "A10G"),
    ("L4", "L4"),
    ("T4", "T4"),
    ("V100-SXM2-32GB", "V100-32GB"),
    ("V100", "V100"),
)
# Host-to-device peak per direction of the x16 PCIe link the accelerator sits on (GB/s). The catalog holds no
# PCIe figures; these are the link generations' nominal rates.
PCIE_PEAK_GBPS = {
    "B300": 64.0,
    "B200": 64.0,
    "H200": 64.0,
    "H100": 64.0,
    "A100-80GB": 32.0,
    "A100-40GB": 32.0,
    "L40S": 32.0,
    "A10G": 32.0,
    "L4": 32.0,
    "T4": 16.0,
    "V100": 16.0,
    "V100-32GB": 16.0,
}
SIZES: dict[str, dict[str, Any]] = {
    # Large square matmuls keep the tensor cores busy; the best of a few sizes is reported.
    "large": {"matmul": [4096, 8192, 16384], "matmul_iters": 30, "copy_mib": 2048, "copy_iters": 20, "h2d_mib": 1024},
    "medium": {"matmul": [2048, 4096], "matmul_iters": 10, "copy_mib": 256, "copy_iters": 10, "h2d_mib": 256},
    "small": {"matmul": [128, 256], "matmul_iters": 3, "copy_mib": 4, "copy_iters": 3, "h2d_mib": 4},
}


def accelerator_for(device_name: str) -> str | None:
    for needle, accelerator in DEVICE_NAME_TO_ACCELERATOR:
        if needle in device_name:
            return accelerator
    return None


def catalog_peaks(accelerator: str) -> dict[str, float | None]:
    """Peak dense bf16 TFLOPS and HBM GB/s per accelerator, from the gpucloud catalog."""
    try:
        sys.path.insert(0, str(REPO_ROOT))
        from gpucloud.catalog import get_catalog

        specs: list[Any] = [s for s in get_catalog() if s.accelerator == accelerator]
        rows = [{"bf16_tflops": s.bf16_tflops, "memory_bandwidth_gbps": s.memory_bandwidth_gbps} for s in specs]
    except ImportError:
        # A bare GPU image may lack botocore, which the catalog module uses to check names; its data file suffices.
        data = json.loads((REPO_ROOT / "gpucloud" / "catalog" / "instances.json").read_text(encoding="utf-8"))
        rows = [r for r in data["instances"].values() if r.get("accelerator") == accelerator]
    if not rows:
        raise SystemExit(f"gpu_bench: accelerator {accelerator!r} is not in the gpucloud catalog")
    return {
        "bf16_tflops": rows[0]["bf16_tflops"],
        "hbm_gbps": rows[0]["memory_bandwidth_gbps"],
        "h2d_gbps": PCIE_PEAK_GBPS.get(accelerator),
    }


def _timer(torch: Any, device: Any) -> Callable[[Callable[[], None], int], float]:
    """Seconds per call of fn, after a warmup; CUDA events on GPUs, perf_counter on CPU."""

    def run(fn: Callable[[], None], iters: int) -> float:
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            torch.cuda.synchronize(device)
            return start.elapsed_time(end) / 1000.0 / iters
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        return (time.perf_counter() - t0) / iters

    return run


def bench_matmul(torch: Any, device: Any, sizes: list[int], iters: int) -> dict[str, Any]:
    timer = _timer(torch, device)
    best = {"tflops": 0.0, "n": 0}
    for n in sizes:
        a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        out = torch.empty(n, n, device=device, dtype=torch.bfloat16)
        seconds = timer(lambda a=a, b=b, out=out: torch.matmul(a, b, out=out), iters)
        tflops = 2.0 * n**3 / seconds / 1e12
        if tflops > best["tflops"]:
            best = {"tflops": tflops, "n": n}
        del a, b, out
    return best


def bench_copy(torch: Any, device: Any, mib: int, iters: int) -> float:
    """Device-to-device copy: every byte is read once and written once, so 2x the buffer moves."""
    timer = _timer(torch, device)
    src = torch.empty(mib * 2**20, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    seconds = timer(lambda: dst.copy_(src), iters)
    return 2.0 * src.numel() / seconds / 1e9


def bench_h2d(torch: Any, device: Any, mib: int, iters: int) -> float | None:
    if device.type != "cuda":
        return None
    timer = _timer(torch, device)
    host = torch.empty(mib * 2**20, dtype=torch.uint8, pin_memory=True).fill_(1)
    dst = torch.empty(host.numel(), dtype=torch.uint8, device=device)
    seconds = timer(lambda: dst.copy_(host, non_blocking=True), iters)
    return host.numel() / seconds / 1e9


def metric(measured: float | None, peak: float | None, unit: str) -> dict[str, Any]:
    ratio = measured / peak if measured is not None and peak else None
    return {
        # Four significant figures, not three decimals: a slow CPU's TFLOPS must not round to zero.
        "measured": None if measured is None else float(f"{measured:.4g}"),
        "theoretical": peak,
        "unit": unit,
        "ratio": None if ratio is None else float(f"{ratio:.4g}"),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="bf16 TFLOPS, HBM and host-to-device bandwidth vs the catalog peak")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default cuda)")
    p.add_argument("--size", choices=sorted(SIZES), default=None, help="problem sizes (default large on GPU)")
    p.add_argument("--accelerator", default=None, help="catalog accelerator to compare with (default: detected)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--min-bf16-fraction", type=float, default=None, help="fail (exit 1) below this share of the bf16 peak"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=".*NumPy.*")
    import torch

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("gpu_bench: CUDA is not available; use --device cpu", file=sys.stderr)
        return 2
    if device.type == "cuda":
        torch.cuda.set_device(device)
        # bf16 GEMMs may reduce in reduced precision: that is what training runs and what the peak assumes.
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
        device_name = torch.cuda.get_device_name(device)
    else:
        device_name = "cpu"
    size = SIZES[args.size or ("large" if device.type == "cuda" else "small")]
    accelerator = args.accelerator or accelerator_for(device_name)
    peaks = catalog_peaks(accelerator) if accelerator else {"bf16_tflops": None, "hbm_gbps": None, "h2d_gbps": None}

    started = time.perf_counter()
    mm = bench_matmul(torch, device, size["matmul"], size["matmul_iters"])
    hbm = bench_copy(torch, device, size["copy_mib"], size["copy_iters"])
    h2d = bench_h2d(torch, device, size["h2d_mib"], size["copy_iters"])
    result = {
        "schema": "gpucloud.gpu_bench/v1",
        "device": str(device),
        "device_name": device_name,
        "accelerator": accelerator,
        "torch": torch.__version__,
        "seconds": round(time.perf_counter() - started, 2),
        "metrics": {
            "bf16_matmul_tflops": {**metric(mm["tflops"], peaks["bf16_tflops"], "TFLOPS"), "matrix_size": mm["n"]},
            "hbm_bandwidth_gbps": metric(hbm, peaks["hbm_gbps"], "GB/s"),
            "h2d_bandwidth_gbps": metric(h2d, peaks["h2d_gbps"], "GB/s"),
        },
    }
    gate_failed = False
    if args.min_bf16_fraction is not None:
        ratio = result["metrics"]["bf16_matmul_tflops"]["ratio"]
        gate_failed = ratio is None or ratio < args.min_bf16_fraction
        result["gate"] = {"min_bf16_fraction": args.min_bf16_fraction, "passed": not gate_failed}

    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{device_name} ({accelerator or 'no catalog match'}), torch {torch.__version__}")
        for name, m in result["metrics"].items():
            measured = "n/a" if m["measured"] is None else f"{m['measured']:.4g}"
            peak = "n/a" if m["theoretical"] is None else f"{m['theoretical']:g}"
            ratio = "" if m["ratio"] is None else f"  ({m['ratio'] * 100:.0f}% of peak)"
            print(f"  {name:<22} {measured:>10} / {peak:>8} {m['unit']}{ratio}")
    return 1 if gate_failed else 0


if __name__ == "__main__":
    sys.exit(main())
