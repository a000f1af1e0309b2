"""Composes one environment's platform from its validated spec. The root program and tests call build()."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.budget import GpuBudget, GpuBudgetConfig
from gpucloud.spec import PlatformSpec


@dataclass
class Platform:
    """What build() created; `exports` are the stack outputs team stacks read through StackReference."""

    spec: PlatformSpec
    budget: GpuBudget
    exports: dict[str, Any] = field(default_factory=dict)


def build(spec: PlatformSpec) -> Platform:
    tags = spec.all_tags
    budget = GpuBudget(
        f"{spec.name}-cost",
        GpuBudgetConfig(region=spec.region, tags=tags, environment=spec.environment, budget=spec.budget),
    )
    exports: dict[str, Any] = {
        "platformName": spec.name,
        "environment": spec.environment,
        "region": spec.region,
        "availabilityZones": list(spec.availability_zones),
    }
    return Platform(spec=spec, budget=budget, exports=exports)
