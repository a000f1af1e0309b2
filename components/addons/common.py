"""Constants and manifest helpers shared by the add-on modules (labels, taints, tolerations, fatal XIDs)."""

from __future__ import annotations

import json
import marshal
import re
from pathlib import Path
from typing import Any

import pulumi_kubernetes as k8s
import yaml

from gpucloud import filecache
from gpucloud.charts import lock as charts_lock
from gpucloud.components.base import pod_identity_trust
from gpucloud.components.nodepools.common import GPU_TAINT, LABEL_PREFIX, NEURON_TAINT
from gpucloud.fleet import labels as L

GPU_TAINT_KEY = GPU_TAINT.key
GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
NEURON_TOLERATION = {"key": NEURON_TAINT.key, "operator": "Exists", "effect": "NoSchedule"}
# Set by the GPU Operator only (not in the device-plugin setup), so nothing here selects on it.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# NFD's PCI label for vendor 10de (NVIDIA); the device plugin chart's own affinity selects on it.
NVIDIA_PCI_LABEL = "feature.node.kubernetes.io/pci-10de.present"
POOL_LABEL = f"{LABEL_PREFIX}/pool"
EFA_PRESENT_LABEL = "vpc.amazonaws.com/efa.present"
EFA_RESOURCE = L.EFA
INSTANCE_TYPE_LABEL = L.INSTANCE_TYPE

# Chart coordinates come from the charts lock (gpucloud/charts/lock.yaml), never from constants here.
NEURON_CHART = "neuron-helm-chart"

# Typed resource classes for the kinds the MPI operator manifest ships; anything else fails loudly so an
# upgraded manifest cannot silently drop an object.
_MANIFEST_KINDS: dict[tuple[str, str], Any] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): k8s.apiextensions.v1.CustomResourceDefinition,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
}

GRAFANA_ADMIN_SECRET = "grafana-admin"
ALERTMANAGER_SERVICE_ACCOUNT = "alertmanager"
EBS_STORAGE_CLASS = "gpucloud-gp3"
EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa"

KPS_RELEASE = "kube-prometheus-stack"
# The Grafana sidecar of kube-prometheus-stack loads every ConfigMap carrying this label (observability.py sets
# the sidecar's label/labelValue to it), so a dashboard ships as one labelled ConfigMap.
DASHBOARD_LABEL = "grafana_dashboard"
DASHBOARD_LABEL_VALUE = "1"
DCGM_PORT = 9400
# XIDs that mean the GPU or its NVLink/memory is broken and the node should be drained and replaced
# (NVIDIA XID catalogue: 48 DBE, 63/64 row-remap, 74 NVLink, 79 fell off the bus, 94/95 contained/uncontained ECC).
FATAL_XIDS = (48, 63, 64, 74, 79, 94, 95)
POD_IDENTITY_TRUST = pod_identity_trust()


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


_PARSED_MANIFESTS: dict[tuple[str, int, int], bytes] = {}


def manifest_objects(path: Path) -> list[dict[str, Any]]:
    """The Kubernetes objects of a vendored release manifest, in file order.

    libyaml's parser (the MPI operator manifest, 0.7 MB, takes 0.3 s instead of 0.9 s), and one parse per process:
    `gpucloud plan --all` plans several stacks that install it. The memo holds marshal bytes, so each caller gets
    its own objects to change.
    """
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED_MANIFESTS:

        def parse() -> bytes:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            text = path.read_text(encoding="utf-8")
            return marshal.dumps([doc for doc in yaml.load_all(text, Loader=loader) if isinstance(doc, dict)])

        # And one parse per machine: every fresh `gpucloud plan` reads the parsed objects back (10 ms, not 0.3 s).
        _PARSED_MANIFESTS[key] = filecache.memo("manifest", str(path), key, parse)
    objects: list[dict[str, Any]] = marshal.loads(_PARSED_MANIFESTS[key])
    return objects


def mpi_operator_manifest(version: str) -> Path:
    pinned = charts_lock.artifact("mpi-operator")
    if version != pinned.version:  # the spec already refuses this; a direct caller gets the same answer
        raise ValueError(f"mpi-operator {version!r} is not pinned; the lock pins {pinned.version}")
    return pinned.artifact_dir / "mpi-operator.yaml"


def grafana_panel(
    pid: int, title: str, expr: str, unit: str, x: int, y: int, legend: str, kind: str = "timeseries"
) -> dict[str, Any]:
    """One half-width Grafana panel on the dashboard's Prometheus datasource variable, legend as a table."""
    return {
        "id": pid,
        "type": kind,
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right"}},
        "targets": [{"refId": "A", "expr": expr, "legendFormat": legend}],
    }


def grafana_dashboard_configmap(
    resource_name: str,
    name: str,
    namespace: str,
    file_name: str,
    dashboard: dict[str, Any],
    opts: Any,
) -> k8s.core.v1.ConfigMap:
    """A Grafana dashboard as the sidecar reads it: one ConfigMap, labelled, holding the dashboard JSON."""
    return k8s.core.v1.ConfigMap(
        resource_name,
        metadata={"name": name, "namespace": namespace, "labels": {DASHBOARD_LABEL: DASHBOARD_LABEL_VALUE}},
        data={file_name: json.dumps(dashboard, indent=1)},
        opts=opts,
    )
