"""Composes one environment's platform from its validated spec. The root program and tests call build().

Each area has its own builder so the composition reads top to bottom: network and cluster, GPU node pools,
storage, Kubernetes add-ons, cost controls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.budget import GpuBudget, GpuBudgetConfig
from components.interfaces import ClusterHandle
from components.storage import GpuStorage, GpuStorageConfig
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


def _build_storage(spec: PlatformSpec, platform: Platform) -> None:
    assert platform.cluster is not None and spec.storage is not None
    storage = GpuStorage(
        f"{spec.name}-storage",
        GpuStorageConfig(
            region=spec.region,
            tags=spec.all_tags,
            name_prefix=spec.name,
            storage=spec.storage,
            fsx_availability_zone=spec.fsx_availability_zone if spec.storage.fsx_enabled else None,
            # Retained data is not enough in prod: protect also stops a replace from deleting it.
            protect=spec.environment == "prod",
        ),
        platform.cluster,
    )
    platform.components["storage"] = storage
    platform.exports.update(storage.exports())


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
    if platform.cluster is not None and spec.storage is not None:
        _build_storage(spec, platform)
    _build_cost_controls(spec, platform)
    return platform
