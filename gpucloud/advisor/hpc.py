"""HPC / FP64 advisor (`gpucloud recommend hpc`): ranks catalog types by FP64 throughput per dollar.

Only accelerators built for double precision count: a datacenter GPU whose FP64 rate is half its FP32 rate.
Graphics-class GPUs run FP64 at 1/32 or 1/64 of FP32 and AWS's Neuron chips have no FP64 at all; those are
excluded with the reason, per accelerator, below. Figures are the catalog's per-accelerator dense FP64 (vector,
or FP64 tensor-core where ``--fp64 tensor`` and the GPU has it: DGEMM-bound codes such as HPL reach the tensor
rate through cuBLAS, most stencil and CFD codes only the vector rate). Times are at peak: a lower bound.
"""

from __future__ import annotations

import math
from typing import Any, Final, Literal

from gpucloud.advisor.rates import capacity_block_hours, hourly_price
from gpucloud.advisor.recommend import CAPACITY_BLOCK_MAX_INSTANCES
from gpucloud.catalog import Catalog, get_catalog

SCHEMA: Final = "gpucloud.recommend-hpc/v1"
Fp64Kind = Literal["vector", "tensor"]

# FP64 : FP32 rate per accelerator, with its source. Accelerators at 1:2 are HPC targets; the rest are not.
FP64_RATIO: Final[dict[str, tuple[float, str]]] = {
    "V100": (1 / 2, "NVIDIA V100 datasheet: FP64 7.8 TFLOPS, FP32 15.7 (SXM2)"),
    "V100-32GB": (1 / 2, "NVIDIA V100 datasheet: FP64 7.8 TFLOPS, FP32 15.7 (SXM2)"),
    "A100-40GB": (1 / 2, "NVIDIA A100 datasheet: FP64 9.7 TFLOPS (19.5 tensor), FP32 19.5"),
    "A100-80GB": (1 / 2, "NVIDIA A100 datasheet: FP64 9.7 TFLOPS (19.5 tensor), FP32 19.5"),
    "H100": (1 / 2, "NVIDIA H100 SXM datasheet: FP64 34 TFLOPS (67 tensor), FP32 67"),
    "H200": (1 / 2, "NVIDIA H200 SXM datasheet: FP64 34 TFLOPS (67 tensor), FP32 67"),
    "B200": (1 / 2, "NVIDIA HGX B200 datasheet: FP64 37 TFLOPS per GPU, FP32 75 (catalog marks 37 unconfirmed)"),
    "T4": (1 / 32, "NVIDIA Turing architecture whitepaper: TU104 FP64 at 1/32 of FP32; the T4 datasheet omits FP64"),
    "A10G": (1 / 64, "NVIDIA Ampere GA102 whitepaper: FP64 at 1/64 of FP32 (A10/A10G are GA102)"),
    "L4": (1 / 64, "NVIDIA Ada architecture whitepaper: AD10x FP64 at 1/64 of FP32"),
    "L40S": (1 / 64, "NVIDIA Ada architecture whitepaper: AD102 FP64 at 1/64 of FP32"),
    "Inferentia2": (0.0, "AWS Neuron docs, NeuronCore-v2 data types: FP32, TF32, BF16, FP16, FP8, INT8; no FP64"),
    "Trainium": (0.0, "AWS Neuron docs, NeuronCore-v2 data types: FP32, TF32, BF16, FP16, FP8, INT8; no FP64"),
    "Trainium2": (0.0, "AWS Neuron docs, NeuronCore-v3 data types: no FP64"),
    "Radeon-Pro-V520": (1 / 16, "AMD Radeon Pro V520 (Navi 12, RDNA): FP64 at 1/16 of FP32; a graphics part"),
}
# Below this FP64:FP32 ratio an accelerator is not an FP64 target.
MEANINGFUL_RATIO: Final = 1 / 4


class HpcInputError(ValueError):
    """Bad HPC job description; the message names the field and what to give instead."""


def recommend_hpc(
    work_pflop: float | None = None,
    deadline_days: float | None = None,
    fp64: Fp64Kind = "vector",
    catalog: Catalog | None = None,
    top: int = 10,
) -> dict[str, Any]:
    """Types ranked by FP64 TFLOPS per $/h; with ``work_pflop`` (FP64 PFLOP) also nodes, time and cost."""
    catalog = catalog or get_catalog()
    for flag, value, example in (("--work", work_pflop, "5e6"), ("--deadline-days", deadline_days, "7")):
        if value is not None and (isinstance(value, bool) or not value > 0 or not math.isfinite(value)):
            raise HpcInputError(f"{flag} must be a positive number (e.g. {example})")
    if deadline_days is not None and work_pflop is None:
        raise HpcInputError("--deadline-days needs --work (the job's FP64 work in PFLOP, e.g. 5e6)")
    if fp64 not in ("vector", "tensor"):
        raise HpcInputError("--fp64 must be 'vector' or 'tensor'")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise HpcInputError("--top must be a whole number of at least 1")
    candidates: list[dict[str, Any]] = []
    excluded: list[dict[str, str]] = []
    for spec in catalog:
        ratio = FP64_RATIO.get(spec.accelerator)
        price, basis = hourly_price(spec, catalog)
        reason: str | None = None
        per_acc = spec.fp64_tensor_tflops if fp64 == "tensor" and spec.fp64_tensor_tflops else spec.fp64_tflops
        if spec.deprecated:
            reason = "deprecated"
        elif ratio is None:
            reason = f"no FP64 record for {spec.accelerator}: not ranked until its FP64 rate is sourced"
        elif ratio[0] < MEANINGFUL_RATIO:
            reason = f"no meaningful FP64 on {spec.accelerator}: {ratio[1]}"
        elif not per_acc:
            reason = f"no FP64 figure for {spec.accelerator} in the catalog"
        elif price is None:
            reason = "no price (no On-Demand SKU and no Capacity Block rate)"
        if reason is not None or price is None or per_acc is None or ratio is None:
            excluded.append({"instance_type": spec.instance_type, "reason": reason or ""})
            continue
        node_tflops = per_acc * spec.accelerator_count
        row: dict[str, Any] = {
            "instance_type": spec.instance_type,
            "accelerator": spec.accelerator,
            "accelerators_per_node": spec.accelerator_count,
            "fp64_tflops_per_accelerator": per_acc,
            "fp64_kind": "tensor" if fp64 == "tensor" and spec.fp64_tensor_tflops else "vector",
            "node_fp64_tflops": node_tflops,
            "price_basis": basis,
            "node_usd_hour": price,
            "tflops_per_usd_hour": node_tflops / price,
            "fp64_source": ratio[1],
        }
        if work_pflop is not None:
            node_hours = work_pflop * 1e15 / (node_tflops * 1e12) / 3600
            nodes = 1 if deadline_days is None else max(1, math.ceil(node_hours / (deadline_days * 24)))
            hours = node_hours / nodes
            billed = capacity_block_hours(hours) if basis == "capacity-block" else hours
            if basis == "capacity-block" and nodes > CAPACITY_BLOCK_MAX_INSTANCES:
                excluded.append(
                    {
                        "instance_type": spec.instance_type,
                        "reason": f"needs {nodes} nodes; Capacity Blocks hold at most "
                        f"{CAPACITY_BLOCK_MAX_INSTANCES} instances",
                    }
                )
                continue
            row.update(nodes=nodes, hours=hours, billed_hours=billed, cost_usd=nodes * price * billed)
        flags = []
        if basis == "capacity-block":
            flags.append("Capacity Blocks only: block rate, billed in whole block days")
        if not spec.efa_supported:
            flags.append("no EFA: across nodes only for loosely coupled work (MPI over TCP)")
        row["flags"] = flags
        candidates.append(row)
    key = "cost_usd" if work_pflop is not None else "tflops_per_usd_hour"
    candidates.sort(key=lambda c: c[key] if key == "cost_usd" else -c[key])
    return {
        "schema": SCHEMA,
        "job": {"task": "hpc", "work_pflop": work_pflop, "deadline_days": deadline_days, "fp64": fp64},
        "assumptions": {
            "throughput": (
                "datasheet peak FP64 (dense); times are lower bounds "
                "(TOP500 GPU systems run HPL at 60-80 % of peak, Rmax/Rpeak)"
            ),
            "meaningful_fp64": f"FP64:FP32 rate at least 1:{round(1 / MEANINGFUL_RATIO)}",
            "multi_node": "work split evenly over nodes; inter-node communication not modelled",
        },
        "candidates": candidates[:top],
        "excluded": excluded,
        "price_region": catalog.price_region,
        "price_date": catalog.price_date,
    }
