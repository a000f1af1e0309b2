"""Kubernetes add-ons that make GPU nodes schedulable, observable and elastic (one module per concern).

Upstream software is installed as `helm.v3.Release` (one visible resource with chart, pinned version, repo and
values, which the offline plan and the policy pack can read); our own objects (ConfigMaps, PrometheusRule,
namespaces, IAM for Pod Identity, the alert SNS topic, the EBS StorageClass) are plain resources. The MPI
operator has no chart: its vendored release manifest becomes one typed resource per object. Every value handed to
a chart uses a key that chart (or its aliased sub-chart) reads at the pinned version; tests render the vendored
charts with the planned values to prove it. Everything targets the cluster's Kubernetes provider.
"""

from gpucloud.components.addons.common import (
    ALERTMANAGER_SERVICE_ACCOUNT,
    DCGM_PORT,
    EBS_CSI_SERVICE_ACCOUNT,
    EBS_STORAGE_CLASS,
    EFA_PRESENT_LABEL,
    EFA_RESOURCE,
    FATAL_XIDS,
    GPU_PRESENT_LABEL,
    GPU_TAINT_KEY,
    GPU_TOLERATION,
    GRAFANA_ADMIN_SECRET,
    INSTANCE_TYPE_LABEL,
    KPS_RELEASE,
    NEURON_CHART,
    NEURON_TOLERATION,
    NVIDIA_PCI_LABEL,
    POD_IDENTITY_TRUST,
    POOL_LABEL,
    manifest_objects,
    mpi_operator_manifest,
)
from gpucloud.components.addons.component import GpuAddons, GpuAddonsConfig
from gpucloud.components.addons.devices import device_plugin_configs, gpu_node_affinity, nfd_values
from gpucloud.components.addons.observability import gpu_alert_rules, gpu_dashboard

__all__ = [
    "ALERTMANAGER_SERVICE_ACCOUNT",
    "DCGM_PORT",
    "EBS_CSI_SERVICE_ACCOUNT",
    "EBS_STORAGE_CLASS",
    "EFA_PRESENT_LABEL",
    "EFA_RESOURCE",
    "FATAL_XIDS",
    "GPU_PRESENT_LABEL",
    "GPU_TAINT_KEY",
    "GPU_TOLERATION",
    "GRAFANA_ADMIN_SECRET",
    "INSTANCE_TYPE_LABEL",
    "KPS_RELEASE",
    "NEURON_CHART",
    "NEURON_TOLERATION",
    "NVIDIA_PCI_LABEL",
    "POD_IDENTITY_TRUST",
    "POOL_LABEL",
    "GpuAddons",
    "GpuAddonsConfig",
    "device_plugin_configs",
    "gpu_alert_rules",
    "gpu_dashboard",
    "gpu_node_affinity",
    "manifest_objects",
    "mpi_operator_manifest",
    "nfd_values",
]
