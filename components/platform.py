"""Composes one environment's platform from its validated spec. The root program and tests call build().

Each area has its own builder so the composition reads top to bottom: network and cluster, GPU node pools,
storage, Kubernetes add-ons, cost controls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.budget import GpuBudget, GpuBudgetConfig
from components.interfaces import ClusterHandle
from gpucloud.spec import PlatformSpec


@dataclass
class Platform:
    """What build() created; `exports` are the stack outputs team stacks read through StackReference."""

    spec: PlatformSpec
    cluster: ClusterHandle | None = None
    components: dict[str, Any] = field(default_factory=dict)
    exports: dict[str, Any] = field(default_factory=dict)


def _build_cost_controls(spec: PlatformSpec, platform: Platform) -> None:
    platform.components["budget"] = GpuBudget(
        f"{spec.name}-cost",
        GpuBudgetConfig(region=spec.region, tags=spec.all_tags, environment=spec.environment, budget=spec.budget),
    )


def build(spec: PlatformSpec) -> Platform:
    platform = Platform(spec=spec)
    platform.exports.update(
        {
            "platformName": spec.name,
            "environment": spec.environment,
            "region": spec.region,
            "availabilityZones": list(spec.availability_zones),
        }
    )
    _build_cost_controls(spec, platform)
    return platform
