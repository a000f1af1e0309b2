"""Stack options as the conformance checks read them (gpucloud.plan.options defines and documents them); whether
the plan runs Kubernetes workloads on a pool's cluster is gpucloud.conformance.clusters."""

from __future__ import annotations

from gpucloud.plan import options
from gpucloud.plan.model import Plan
from gpucloud.plan.options import ENFORCE_CHART_LOCK, EXTERNAL_DEVICE_PLUGINS, StackOptionError

__all__ = [
    "ENFORCE_CHART_LOCK",
    "EXTERNAL_DEVICE_PLUGINS",
    "StackOptionError",
    "external_device_plugins",
    "lock_enforced",
    "validate",
]


def lock_enforced(plan: Plan) -> bool:
    return options.lock_enforced(plan.config, plan.stack_file)


def external_device_plugins(plan: Plan) -> bool:
    return options.external_device_plugins(plan.config, plan.stack_file)


def validate(plan: Plan) -> None:
    """Read every option once, so that a bad value stops the plan before any check runs."""
    lock_enforced(plan)
    external_device_plugins(plan)
