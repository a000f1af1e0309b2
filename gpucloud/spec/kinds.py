"""Workload kinds, importable without the spec models (pydantic): the policy pack reads them for every plan."""

from __future__ import annotations

from typing import Literal

WorkloadKind = Literal["training", "inference", "hpc", "rendering"]
