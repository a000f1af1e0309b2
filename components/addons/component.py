"""GpuAddons: the Kubernetes add-ons that make one cluster's GPU nodes schedulable, observable and elastic.

The component composes one mixin per concern (device plugins, observability, EBS storage, autoscaling, MPI
operator), each in its own module, so every child keeps the URN it had when this was one module.
"""

from __future__ import annotations

import pulumi
from pydantic import Field

from gpucloud.components.addons.autoscaling import AutoscalingMixin
from gpucloud.components.addons.cost_allocation import CostAllocationMixin
from gpucloud.components.addons.devices import DevicePluginsMixin
from gpucloud.components.addons.mpi import MpiOperatorMixin
from gpucloud.components.addons.observability import ObservabilityMixin
from gpucloud.components.addons.storage import EbsStorageMixin
from gpucloud.components.base import ComponentConfig
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.spec import AddonsSpec, NodePoolSpec


class GpuAddonsConfig(ComponentConfig):
    """Inputs of GpuAddons."""

    addons: AddonsSpec = Field(description="The add-ons section of the stack spec.")
    pools: list[NodePoolSpec] = Field(
        min_length=1, description="The platform's GPU node pools (EFA types, backends for the autoscaler choice)."
    )
    alert_emails: list[str] = Field(
        default_factory=list,
        description="Addresses alerts go to when observability.alerts.emails is empty (the platform passes the "
        "budget's alertEmails).",
    )
    protect_data: bool = Field(
        default=False, description="Keep Prometheus' volume when its claim is deleted (StorageClass Retain)."
    )


class GpuAddons(
    DevicePluginsMixin, ObservabilityMixin, EbsStorageMixin, AutoscalingMixin, MpiOperatorMixin, CostAllocationMixin
):
    """Device plugins, observability and autoscaling for one cluster's GPU nodes."""

    def __init__(
        self,
        name: str,
        config: GpuAddonsConfig,
        cluster: ClusterHandle,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:addons:GpuAddons", name, None, opts)
        self._name = name
        self._config = config
        self._cluster = cluster
        addons = config.addons
        obs = addons.observability
        prefix = addons.namespace_prefix
        self.autoscaler = addons.resolved_autoscaler(config.pools)
        self.releases = {}
        self.namespaces = {}

        self.gpu_namespace = f"{prefix}{'gpu-operator' if addons.gpu.use == 'gpu-operator' else 'nvidia-device-plugin'}"
        self.monitoring_namespace = f"{prefix}monitoring"
        self._namespace("gpu", self.gpu_namespace)
        self._gpu_stack()
        self._efa_plugin()

        self.prometheus_server_url = None
        self.alert_topic_arn = None
        self.storage_class = None
        self.ebs_csi_driver = None
        self.keda_trigger_authentication = None
        self.amp_workspace_arn = None
        self.amp_workspace_id = None
        self.scraper = None
        self.prometheus_rule = None
        self.dashboard = None
        needs_monitoring_ns = obs.enable_dcgm_exporter or obs.metrics == "kube-prometheus-stack"
        if needs_monitoring_ns:
            self._namespace("monitoring", self.monitoring_namespace)
        if obs.metrics == "kube-prometheus-stack":
            self._kube_prometheus_stack()
        elif obs.metrics == "amp":
            self._amp()
        if obs.enable_dcgm_exporter and addons.gpu.use == "device-plugin":
            self._dcgm_exporter()
        self._neuron_plugin()

        self.container_insights = None
        if obs.enable_container_insights:
            self._container_insights()
        self.log_group_name = None
        if obs.fluent_bit.enabled:
            self._fluent_bit()

        self.cluster_autoscaler_role_arn = None
        self.mpi_operator = {}
        if self.autoscaler == "cluster-autoscaler":
            self._cluster_autoscaler()
        if addons.autoscaling.keda.enabled:
            self._keda()
        if addons.autoscaling.metrics_server.enabled:
            self._metrics_server()
        if addons.mpi_operator_enabled:
            self._mpi_operator()
        self.opencost_unpriced_types: list[str] = []
        if addons.cost_allocation.enabled:
            self._cost_allocation()

        self.register_outputs(
            {
                "gpu_namespace": self.gpu_namespace,
                "monitoring_namespace": self.monitoring_namespace,
                "autoscaler": self.autoscaler,
                "prometheus_server_url": self.prometheus_server_url,
                "keda_trigger_authentication": self.keda_trigger_authentication,
                "amp_workspace_arn": self.amp_workspace_arn,
                "log_group_name": self.log_group_name,
                "cluster_autoscaler_role_arn": self.cluster_autoscaler_role_arn,
                "releases": sorted(self.releases),
                "alert_topic_arn": self.alert_topic_arn,
            }
        )
