"""Stack options as the conformance checks read them (gpucloud.plan.options defines and documents them), and
whether a plan runs Kubernetes workloads itself."""

from __future__ import annotations

from typing import Any

from gpucloud.plan import options
from gpucloud.plan.model import Plan
from gpucloud.plan.options import ENFORCE_CHART_LOCK, EXTERNAL_DEVICE_PLUGINS, StackOptionError

__all__ = [
    "ENFORCE_CHART_LOCK",
    "EXTERNAL_DEVICE_PLUGINS",
    "StackOptionError",
    "external_device_plugins",
    "lock_enforced",
    "manages_workloads",
    "validate",
]


def lock_enforced(plan: Plan) -> bool:
    return options.lock_enforced(plan.config, plan.stack_file)


def external_device_plugins(plan: Plan) -> bool:
    return options.external_device_plugins(plan.config, plan.stack_file)


def manages_workloads(ctx: Any) -> bool:
    """Whether the plan itself runs anything on Kubernetes: an object with a pod template (registered or rendered
    from a chart), or a Helm release or chart (whose objects may not be rendered). Only such a plan can be sure
    that a device plugin it does not install is missing; the others' clusters get their add-ons elsewhere."""
    from gpucloud.conformance.inventory import objects, pod_sets

    if any(r.type.startswith("kubernetes:helm.sh/") for r in ctx.plan):
        return True
    return any(ps.pod_spec.get("containers") for o in objects(ctx) for ps in pod_sets(o))


def validate(plan: Plan) -> None:
    """Read every option once, so that a bad value stops the plan before any check runs."""
    lock_enforced(plan)
    external_device_plugins(plan)
