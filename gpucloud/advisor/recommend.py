"""GPU advisor: memory arithmetic for a workload, then catalog types ranked by cost per useful unit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

from gpucloud.catalog import Catalog, InstanceSpec, get_catalog

Workload = Literal["training", "inference", "hpc", "rendering"]
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
Interconnect = Literal["any", "nvlink", "efa"]

BYTES_PER_PARAM: Final[dict[str, float]] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
# Mixed-precision Adam: bf16 weights (2) + bf16 grads (2) + fp32 master weights, momentum, variance (12).
TRAINING_BYTES_PER_PARAM: Final[dict[str, float]] = {"fp32": 16, "bf16": 16, "fp16": 16, "fp8": 14}
# Usable share of GPU memory after the CUDA context, allocator fragmentation and framework buffers.
USABLE_FRACTION: Final = 0.9
GIB: Final = 1024**3

METRICS: Final[dict[str, tuple[str, str]]] = {
    # key: (label, unit)
    "bf16": ("$ per BF16 PFLOP-hour", "BF16 PFLOPS"),
    "memory": ("$ per GB of GPU memory-hour", "GB GPU memory"),
    "int8": ("$ per INT8 POPS-hour", "INT8 POPS"),
    "fp64": ("$ per FP64 TFLOP-hour", "FP64 TFLOPS"),
}
DEFAULT_METRIC: Final[dict[str, str]] = {
    "training": "bf16",
    "inference": "memory",
    "hpc": "fp64",
    "rendering": "memory",
}


class AdvisorInputError(ValueError):
    """Bad workload description; the message says what to give instead."""


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    kind: Workload
    params_b: float | None = None
    precision: Precision = "bf16"
    memory_gib: float | None = None
    gpus: int | None = None
    multi_node: bool = False
    interconnect: Interconnect = "any"
    activation_headroom: float = 0.25
    kv_cache_headroom: float = 0.3
    metric: str | None = None


def memory_requirement(w: WorkloadSpec) -> tuple[float, list[str]]:
    """GiB of accelerator memory the workload needs, and the arithmetic as readable lines."""
    if w.memory_gib is not None:
        if w.memory_gib <= 0:
            raise AdvisorInputError("--memory-gib must be positive")
        return w.memory_gib, [f"memory given: {w.memory_gib:g} GiB"]
    if w.params_b is None:
        raise AdvisorInputError("give the model size (--params, billions of parameters) or the memory (--memory-gib)")
    if w.params_b <= 0:
        raise AdvisorInputError("--params must be positive (billions of parameters, e.g. 70)")
    params = w.params_b * 1e9
    if w.kind == "training":
        if w.precision not in TRAINING_BYTES_PER_PARAM:
            raise AdvisorInputError(
                f"training precision {w.precision!r} is not supported; use one of {sorted(TRAINING_BYTES_PER_PARAM)}"
            )
        bpp = TRAINING_BYTES_PER_PARAM[w.precision]
        state = params * bpp / GIB
        total = state * (1 + w.activation_headroom)
        return total, [
            f"weights + gradients + optimizer state: {w.params_b:g}e9 params x {bpp:g} B/param "
            f"(mixed-precision Adam: 2 weights + 2 grads + 12 fp32 master/m/v) = {state:,.1f} GiB",
            f"activations headroom: +{w.activation_headroom:.0%} = {total:,.1f} GiB",
        ]
    bpp = BYTES_PER_PARAM[w.precision]
    weights = params * bpp / GIB
    total = weights * (1 + w.kv_cache_headroom)
    return total, [
        f"weights: {w.params_b:g}e9 params x {bpp:g} B/param ({w.precision}) = {weights:,.1f} GiB",
        f"KV cache and activations headroom: +{w.kv_cache_headroom:.0%} = {total:,.1f} GiB",
    ]


def _units(spec: InstanceSpec, metric: str) -> float | None:
    n = spec.accelerator_count
    if metric == "bf16":
        return n * spec.bf16_tflops / 1000 if spec.bf16_tflops else None
    if metric == "int8":
        return n * spec.int8_tops / 1000 if spec.int8_tops else None
    if metric == "fp64":
        fp64 = spec.fp64_tensor_tflops or spec.fp64_tflops
        return n * fp64 if fp64 else None
    # GB (decimal), as the metric's label says.
    return spec.total_accelerator_memory_gib * GIB / 1e9


def recommend(w: WorkloadSpec, catalog: Catalog | None = None, top: int = 10) -> dict[str, Any]:
    catalog = catalog or get_catalog()
    metric = w.metric or DEFAULT_METRIC[w.kind]
    if metric not in METRICS:
        raise AdvisorInputError(f"--rank-by {metric!r} is not one of {sorted(METRICS)}")
    if w.gpus is not None and w.gpus < 1:
        raise AdvisorInputError("--gpus must be at least 1")
    required, arithmetic = memory_requirement(w)
    candidates: list[dict[str, Any]] = []
    excluded: list[dict[str, str]] = []
    for spec in catalog:
        if spec.deprecated:
            excluded.append({"instance_type": spec.instance_type, "reason": "deprecated"})
            continue
        price = spec.on_demand_usd
        basis = "on-demand"
        if price is None and spec.capacity_block_usd is not None:
            price, basis = spec.capacity_block_usd, "capacity-block"
        if price is None:
            excluded.append({"instance_type": spec.instance_type, "reason": "no price in the catalog"})
            continue
        units = _units(spec, metric)
        if units is None:
            excluded.append({"instance_type": spec.instance_type, "reason": f"no {METRICS[metric][1]} figure"})
            continue
        per_gpu = spec.accelerator_memory_gib * USABLE_FRACTION
        gpus = max(math.ceil(required / per_gpu), w.gpus or 1)
        nodes = math.ceil(gpus / spec.accelerator_count)
        if nodes > 1 and not w.multi_node:
            excluded.append(
                {
                    "instance_type": spec.instance_type,
                    "reason": f"needs {gpus} accelerators ({nodes} nodes) but the workload is single-node",
                }
            )
            continue
        flags: list[str] = []
        if w.interconnect == "efa" and not spec.efa_supported:
            excluded.append({"instance_type": spec.instance_type, "reason": "no EFA, and EFA was required"})
            continue
        if w.interconnect == "nvlink" and "nvlink" not in spec.interconnect.lower():
            excluded.append({"instance_type": spec.instance_type, "reason": f"no NVLink ({spec.interconnect})"})
            continue
        multi_node = nodes > 1 or w.multi_node
        if multi_node and w.kind in ("training", "hpc") and not spec.efa_supported:
            flags.append("no EFA: multi-node collectives over TCP will bottleneck")
        elif multi_node and w.kind in ("training", "hpc") and spec.efa_interfaces < spec.accelerator_count:
            flags.append(f"only {spec.efa_interfaces} EFA interfaces for {spec.accelerator_count} accelerators")
        if basis == "capacity-block":
            flags.append("Capacity Blocks only (no On-Demand SKU): priced at the block rate")
        candidates.append(
            {
                "instance_type": spec.instance_type,
                "accelerator": spec.accelerator,
                "accelerators_per_node": spec.accelerator_count,
                "accelerator_memory_gib": spec.accelerator_memory_gib,
                "nodes": nodes,
                "accelerators": nodes * spec.accelerator_count,
                "efa": spec.efa_supported,
                "price_basis": basis,
                "node_usd_hour": price,
                "fleet_usd_hour": round(price * nodes, 4),
                "fleet_usd_month": round(price * nodes * 730, 2),
                "cost_per_unit_hour": round(price / units, 4),
                "flags": flags,
            }
        )
    candidates.sort(key=lambda c: (bool(c["flags"] and not c["efa"] and multi_node_wanted(w)), c["cost_per_unit_hour"]))
    return {
        "workload": w.kind,
        "metric": {"key": metric, "label": METRICS[metric][0]},
        "memory": {"required_gib": round(required, 1), "usable_fraction": USABLE_FRACTION, "arithmetic": arithmetic},
        "candidates": candidates[:top],
        "excluded": excluded,
        "price_date": catalog.price_date,
    }


def multi_node_wanted(w: WorkloadSpec) -> bool:
    return w.multi_node and w.kind in ("training", "hpc")
