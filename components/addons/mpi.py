"""The MPI operator (v2), installed from its vendored release manifest as typed resources."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpucloud.charts.images import pin_ref
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.addons.common import _MANIFEST_KINDS, _snake, manifest_objects, mpi_operator_manifest

# The release manifest's Deployment sets neither resources nor probes: without requests the controller is the
# first thing evicted under node pressure, and a wedged controller is never restarted. The controller serves
# /healthz on :8080 (cmd/mpi-operator/app/server.go, healthCheckPort, a leader-election healthz adaptor that
# reports healthy for a standby replica too). Sized for a controller with two worker threads whose informers
# cache the cluster's pods, jobs, services, config maps and secrets.
MPI_OPERATOR_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "100m", "memory": "256Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
MPI_OPERATOR_HEALTH_PORT = 8080


def with_resources_and_probes(deployment: dict[str, Any]) -> dict[str, Any]:
    """The manifest's Deployment with requests, limits and liveness/readiness probes on its container."""
    doc = copy.deepcopy(deployment)
    probe = {"httpGet": {"path": "/healthz", "port": MPI_OPERATOR_HEALTH_PORT}, "periodSeconds": 10}
    for container in doc["spec"]["template"]["spec"]["containers"]:
        # The manifest names its image by tag; the image lock's digest, where it records one, pins it.
        container["image"] = pin_ref(str(container.get("image", "")))
        container.setdefault("resources", copy.deepcopy(MPI_OPERATOR_RESOURCES))
        container.setdefault("livenessProbe", {**probe, "initialDelaySeconds": 15, "failureThreshold": 3})
        container.setdefault("readinessProbe", {**probe, "initialDelaySeconds": 5})
    return doc


class MpiOperatorMixin(AddonsBase):
    """MPIJob support for multi-node training templates."""

    def _mpi_operator(self) -> None:
        """The MPI operator v2 release manifest as typed resources (it ships no chart), CRD and RBAC first."""
        version = self._config.addons.mpi_operator.version
        path = mpi_operator_manifest(version)
        namespace: k8s.core.v1.Namespace | None = None
        for doc in manifest_objects(path):
            api_version, kind = doc["apiVersion"], doc["kind"]
            if kind == "Deployment":
                doc = with_resources_and_probes(doc)
            cls = _MANIFEST_KINDS.get((api_version, kind))
            if cls is None:
                raise ValueError(f"{path}: {api_version} {kind} is not a kind GpuAddons knows how to create")
            name = doc["metadata"]["name"]
            args = {_snake(k): v for k, v in doc.items() if k not in ("apiVersion", "kind")}
            namespaced = "namespace" in doc["metadata"]
            deps: list[pulumi.Resource] = [namespace] if namespace is not None and namespaced else []
            if kind == "Deployment":
                # The controller starts only once its CRD and RBAC exist, or it crash-loops on its informers.
                deps += list(self.mpi_operator.values())
            resource = cls(f"{self._name}-mpi-operator-{kind.lower()}-{name}", **args, opts=self._k8s(depends_on=deps))
            if kind == "Namespace":
                namespace = resource
            self.mpi_operator[f"{kind}/{name}"] = resource
