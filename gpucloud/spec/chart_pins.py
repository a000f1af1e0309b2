"""Chart and release pins of the stack spec: a version field accepts only what the charts lock pins.

Every add-on and component config model types its version field with one of these, so an upgrade is a reviewed
lock change plus the vendored copy, never a surprise from an upstream `latest` nor a version nothing here has
rendered. `reject_removed` is the one way a model refuses a key it no longer reads, naming what replaces it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from gpucloud.charts import lock as charts_lock
from gpucloud.spec.base import RULE_ERROR


def reject_removed(data: Any, removed: dict[str, str]) -> None:
    """Fail with one message per removed key still in the stack file, naming what replaces it."""
    if not isinstance(data, dict):
        return
    found = [(key, why) for key, why in removed.items() if key in data]
    if found:
        raise PydanticCustomError(RULE_ERROR, "; ".join(f"{k}: {m}" for k, m in found), {"violations": found})


def pinned_chart(chart: str) -> AfterValidator:
    """Validator for a chart version field: only the version the charts lock pins is accepted."""

    def check(version: str) -> str:
        problem = charts_lock.check_version(chart, version)
        if problem is not None:
            raise ValueError(problem)
        return version

    return AfterValidator(check)


def _pinned_artifact(name: str) -> AfterValidator:
    def check(version: str) -> str:
        pinned = charts_lock.artifact(name).version
        if version != pinned:
            raise ValueError(f"{name} {version!r} is not pinned; the lock pins {pinned}")
        return version

    return AfterValidator(check)


DevicePluginVersion = Annotated[str, pinned_chart("nvidia-device-plugin")]
GpuOperatorVersion = Annotated[str, pinned_chart("gpu-operator")]
EfaPluginVersion = Annotated[str, pinned_chart("aws-efa-k8s-device-plugin")]
FluentBitVersion = Annotated[str, pinned_chart("aws-for-fluent-bit")]
DcgmExporterVersion = Annotated[str, pinned_chart("dcgm-exporter")]
KubePrometheusStackVersion = Annotated[str, pinned_chart("kube-prometheus-stack")]
KedaVersion = Annotated[str, pinned_chart("keda")]
MetricsServerVersion = Annotated[str, pinned_chart("metrics-server")]
OpenCostVersion = Annotated[str, pinned_chart("opencost")]
ClusterAutoscalerVersion = Annotated[str, pinned_chart("cluster-autoscaler")]
NeuronPluginVersion = Annotated[str, pinned_chart("neuron-helm-chart")]
# The MPI operator releases whose manifest is vendored under vendor/upstream/manifests (no Helm chart exists).
MpiOperatorVersion = Annotated[str, _pinned_artifact("mpi-operator")]
KueueVersion = Annotated[str, pinned_chart("kueue")]
LoadBalancerControllerVersion = Annotated[str, pinned_chart("aws-load-balancer-controller")]
