"""Per-accelerator capabilities (precision support, dense FP8, training/serving role), from accelerators.json.

A leaf of facts like the instance catalog: stdlib only, each record names its source. Keyed by the catalog's
``accelerator`` name; dense BF16 and memory bandwidth stay per instance type in instances.json.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Final

SCHEMA: Final = "gpucloud.accelerators/v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class Accelerator:
    name: str
    architecture: str
    bf16: bool
    fp8: bool
    fp8_dense_tflops: float | None
    training: bool
    serving: bool
    # bitsandbytes-style 4-bit quantisation (QLoRA) needs CUDA kernels.
    quantized_cuda: bool
    source: str
    # Multi-Instance GPU partitioning (NVIDIA MIG user guide, supported GPUs: A100, H100, H200, B200 class).
    mig: bool = False


@functools.cache
def accelerators() -> dict[str, Accelerator]:
    data = json.loads(resources.files(__package__).joinpath("accelerators.json").read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"accelerators.json schema {data.get('schema')!r} is not {SCHEMA!r}")
    return {name: Accelerator(name=name, **record) for name, record in data["accelerators"].items()}


def accelerator(name: str) -> Accelerator | None:
    return accelerators().get(name)
