"""Config shared by the GPU-shape guardrails."""

from __future__ import annotations

from typing import Any

WORKLOAD_LABEL_KEYS: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string"},
    "default": ["gpucloud.io/workload", "workload", "Workload"],
    "description": "Node label / tag keys whose value names the pool's workload (training, inference, ...).",
}
