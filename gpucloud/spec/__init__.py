"""Stack spec models: one validated object per environment, read from the stack file's `gpucloud:platform`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpucloud import lazy_exports

if TYPE_CHECKING:
    from gpucloud.spec.addons import AddonsSpec
    from gpucloud.spec.base import RuleViolations, SpecModel
    from gpucloud.spec.budget import BudgetSpec
    from gpucloud.spec.cluster import SUPPORTED_KUBERNETES_VERSIONS, ClusterSpec, SystemNodeGroupSpec
    from gpucloud.spec.loading import load_object as load_object
    from gpucloud.spec.loading import parse_object as parse_object
    from gpucloud.spec.network import ExistingVpcSpec, NetworkSpec
    from gpucloud.spec.platform import REQUIRED_TAGS, PlatformSpec
    from gpucloud.spec.pools import AmiSpec, CapacitySpec, EfaSpec, NodePoolSpec, ReservedCapacitySpec
    from gpucloud.spec.storage import StorageSpec

from gpucloud.spec.errors import SpecError, SpecIssue

# The models are imported on first use (PEP 562): a plan of a program that uses no gpucloud component (the
# corpus, a team's raw pulumi_aws program) catches SpecError and reads a workload kind, and should not pay for
# pydantic and every model (about 0.1 s) to do so.
_LAZY = {
    "AddonsSpec": "addons",
    "RuleViolations": "base",
    "SpecModel": "base",
    "BudgetSpec": "budget",
    "SUPPORTED_KUBERNETES_VERSIONS": "cluster",
    "ClusterSpec": "cluster",
    "SystemNodeGroupSpec": "cluster",
    "load_object": "loading",
    "parse_object": "loading",
    "ExistingVpcSpec": "network",
    "NetworkSpec": "network",
    "REQUIRED_TAGS": "platform",
    "PlatformSpec": "platform",
    "AmiSpec": "pools",
    "CapacitySpec": "pools",
    "EfaSpec": "pools",
    "NodePoolSpec": "pools",
    "ReservedCapacitySpec": "pools",
    "StorageSpec": "storage",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


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
    from gpucloud.spec.loading import parse_object
    from gpucloud.spec.platform import PlatformSpec

    return parse_object(PlatformSpec, CONFIG_KEY, data, source, aws_region)


def load_platform() -> PlatformSpec:
    """Read and validate the platform spec from the running Pulumi program's stack config."""
    from gpucloud.spec.loading import load_object
    from gpucloud.spec.platform import PlatformSpec

    return load_object(PlatformSpec, CONFIG_KEY)
