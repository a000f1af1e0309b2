"""One way to install a pinned chart: every Helm release of gpucloud's components goes through `helm_release`.

Coordinates come from the charts lock (an OCI chart is its URL with no repository_opts). Every release is atomic
with cleanup-on-fail and a timeout: a failed upgrade rolls back and leaves the previous working version running on
the GPU nodes, a failed install leaves nothing half-created behind, and a hung one fails within the timeout instead
of holding `pulumi up` open.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpucloud.charts import images as charts_images
from gpucloud.charts import lock as charts_lock

# Seconds Helm waits for a release's resources (the GPU Operator's driver DaemonSet is the slowest to settle).
HELM_TIMEOUT_S = 900


def helm_release(
    resource_name: str,
    chart: str,
    version: str,
    *,
    namespace: pulumi.Input[str],
    values: pulumi.Input[dict[str, Any]],
    opts: pulumi.ResourceOptions,
    release_name: str | None = None,
    create_namespace: bool | None = None,
) -> k8s.helm.v3.Release:
    """A helm.v3.Release of `chart` at the locked `version`; `release_name` None lets Pulumi autoname it.

    The image lock's digests for this chart version are set in `values` (gpucloud/charts/images.py pin_values),
    so every release runs its images by digest wherever the lock records one. On a plain dict, so that an Output
    inside it stays where it is: lifting the whole dict into one Output would make every value unknown at preview
    as soon as one of them is."""
    pinned = charts_lock.pin(chart, version)
    if isinstance(values, dict):
        values = charts_images.pin_values(pinned.name, pinned.version, values)
    else:
        pending: Any = values  # an Output (or awaitable) of the whole dict: pin once it resolves
        values = pulumi.Output.from_input(pending).apply(
            lambda v: charts_images.pin_values(pinned.name, pinned.version, dict(v or {}))
        )
    named: dict[str, Any] = {}
    if release_name is not None:
        named["name"] = release_name
    if create_namespace is not None:
        named["create_namespace"] = create_namespace
    return k8s.helm.v3.Release(
        resource_name,
        **named,
        chart=pinned.release_chart,
        version=pinned.version,
        repository_opts=pinned.repository_opts,
        namespace=namespace,
        atomic=True,
        cleanup_on_fail=True,
        timeout=HELM_TIMEOUT_S,
        values=values,
        opts=opts,
    )
