"""Stack spec models: one validated object per environment, read from the stack file's `gpucloud:platform`."""

from __future__ import annotations

from typing import Any

from gpucloud.spec.addons import AddonsSpec
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.budget import BudgetSpec
from gpucloud.spec.cluster import SUPPORTED_KUBERNETES_VERSIONS, ClusterSpec, SystemNodeGroupSpec
from gpucloud.spec.errors import SpecError, SpecIssue
from gpucloud.spec.loading import load_object, parse_object
from gpucloud.spec.network import ExistingVpcSpec, NetworkSpec
from gpucloud.spec.platform import REQUIRED_TAGS, PlatformSpec
from gpucloud.spec.pools import AmiSpec, CapacitySpec, EfaSpec, NodePoolSpec, ReservedCapacitySpec
from gpucloud.spec.storage import StorageSpec

CONFIG_KEY = "platform"
CONFIG_NAMESPACE = "gpucloud"

__all__ = [
    "CONFIG_KEY",
    "CONFIG_NAMESPACE",
    "REQUIRED_TAGS",
    "SUPPORTED_KUBERNETES_VERSIONS",
    "AddonsSpec",
    "AmiSpec",
    "BudgetSpec",
    "CapacitySpec",
    "ClusterSpec",
    "EfaSpec",
    "ExistingVpcSpec",
    "NetworkSpec",
    "NodePoolSpec",
    "PlatformSpec",
    "ReservedCapacitySpec",
    "RuleViolations",
    "SpecError",
    "SpecIssue",
    "SpecModel",
    "StorageSpec",
    "SystemNodeGroupSpec",
    "load_platform",
    "parse_platform",
]


def parse_platform(data: Any, source: str = "stack spec", aws_region: str | None = None) -> PlatformSpec:
    """Validate a `gpucloud:platform` object. Raises SpecError listing every problem."""
    return parse_object(PlatformSpec, CONFIG_KEY, data, source, aws_region)


def load_platform() -> PlatformSpec:
    """Read and validate the platform spec from the running Pulumi program's stack config."""
    return load_object(PlatformSpec, CONFIG_KEY)
