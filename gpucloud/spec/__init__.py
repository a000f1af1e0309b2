"""Stack spec models: one validated object per environment, read from the stack file's `gpucloud:platform`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from gpucloud.spec.addons import AddonsSpec
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.budget import BudgetSpec
from gpucloud.spec.cluster import SUPPORTED_KUBERNETES_VERSIONS, ClusterSpec, SystemNodeGroupSpec
from gpucloud.spec.errors import SpecError, SpecIssue, issues_from_validation
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
    prefix = f"{CONFIG_NAMESPACE}:{CONFIG_KEY}"
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SpecError([SpecIssue(prefix, f"not valid JSON ({exc.msg})")], source) from None
    if not isinstance(data, Mapping):
        raise SpecError([SpecIssue(prefix, f"must be an object, got {type(data).__name__}")], source)
    try:
        spec = PlatformSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(issues_from_validation(exc, PlatformSpec, prefix), source) from None
    if aws_region is not None and aws_region != spec.region:
        raise SpecError(
            [SpecIssue("aws:region", f"'{aws_region}' differs from {prefix}.region '{spec.region}'; make them equal")],
            source,
        )
    return spec


def load_platform(namespace: str = CONFIG_NAMESPACE) -> PlatformSpec:
    """Read and validate the platform spec from the running Pulumi program's stack config."""
    import pulumi

    raw = pulumi.Config(namespace).get(CONFIG_KEY)
    if raw is None:
        raise SpecError(
            [SpecIssue(f"{namespace}:{CONFIG_KEY}", "required stack config object is missing from the stack file")],
            f"stack '{pulumi.get_stack()}'",
        )
    return parse_platform(raw, f"stack '{pulumi.get_stack()}'", pulumi.Config("aws").get("region"))
