"""Kubernetes add-ons that make GPU nodes schedulable, observable and elastic.

Upstream software is installed as `helm.v3.Release` (one visible resource with chart, pinned version, repo and
values, which the offline plan and the policy pack can read); our own objects (ConfigMaps, PrometheusRule,
namespaces, IAM for Pod Identity, the alert SNS topic, the EBS StorageClass) are plain resources. The MPI
operator has no chart: its vendored release manifest becomes one typed resource per object. Every value handed to
a chart uses a key that chart (or its aliased sub-chart) reads at the pinned version; tests render the vendored
charts with the planned values to prove it. Everything targets the cluster's Kubernetes provider.
"""

from __future__ import annotations

import json
import marshal
import re
import secrets
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import yaml
from pydantic import Field

from components.base import ComponentConfig, account_and_partition, child, pod_identity_trust
from components.interfaces import ClusterHandle
from components.nodepools.pool import GPU_TAINT, LABEL_PREFIX, NEURON_TAINT
from gpucloud.charts import lock as charts_lock
from gpucloud.spec import AddonsSpec, NodePoolSpec
from gpucloud.spec.addons import TIME_SLICING_CONFIG_NAME

GPU_TAINT_KEY = GPU_TAINT.key
GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
NEURON_TOLERATION = {"key": NEURON_TAINT.key, "operator": "Exists", "effect": "NoSchedule"}
# Set by the GPU Operator only (not in the device-plugin setup), so nothing here selects on it.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# NFD's PCI label for vendor 10de (NVIDIA); the device plugin chart's own affinity selects on it.
NVIDIA_PCI_LABEL = "feature.node.kubernetes.io/pci-10de.present"
POOL_LABEL = f"{LABEL_PREFIX}/pool"
EFA_PRESENT_LABEL = "vpc.amazonaws.com/efa.present"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

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
DCGM_PORT = 9400
# XIDs that mean the GPU or its NVLink/memory is broken and the node should be drained and replaced
# (NVIDIA XID catalogue: 48 DBE, 63/64 row-remap, 74 NVLink, 79 fell off the bus, 94/95 contained/uncontained ECC).
FATAL_XIDS = (48, 63, 64, 74, 79, 94, 95)
POD_IDENTITY_TRUST = pod_identity_trust()


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


def nfd_values() -> dict[str, Any]:
    """Node feature discovery overrides, for the sub-chart under whatever key its parent chart reads."""
    # EFA PCI devices are vendor 1d0f (Amazon) with device ids efa0..efa3; matching the vendor alone would also
    # label every node through its ENA card, which is 1d0f as well.
    return {
        "worker": {
            # Every node, whatever its taints (GPU pools nvidia.com/gpu=true, Neuron pools aws.amazon.com/neuron):
            # the device plugins select nodes by NFD's labels, so a worker kept off a pool hides that pool.
            "tolerations": [{"operator": "Exists"}],
            "config": {
                "sources": {
                    "custom": [
                        {
                            "name": "aws-efa",
                            "labels": {EFA_PRESENT_LABEL: "true"},
                            "matchFeatures": [
                                {
                                    "feature": "pci.device",
                                    "matchExpressions": {
                                        "vendor": {"op": "In", "value": ["1d0f"]},
                                        "device": {"op": "InRegexp", "value": ["^efa"]},
                                    },
                                }
                            ],
                        }
                    ]
                }
            },
        },
        # NFD drops labels outside its own namespaces unless listed here (the EFA rule's vpc.amazonaws.com).
        "master": {"config": {"extraLabelNs": ["vpc.amazonaws.com", "nvidia.com"]}},
    }


def gpu_node_affinity(pools: list[NodePoolSpec]) -> dict[str, Any]:
    """Required node affinity for a per-GPU-node DaemonSet: NVIDIA pools by their own label, or NFD's PCI label.

    Terms are ORed. The pool label is on every node from registration (the pools set it), so nothing waits for
    another add-on; NFD's vendor-10de label also covers NVIDIA nodes that gpucloud did not create.
    """
    gpu_pools = sorted(p.name for p in pools if p.specs[0].is_gpu)
    terms: list[dict[str, Any]] = []
    if gpu_pools:
        terms.append({"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": gpu_pools}]})
    terms.append({"matchExpressions": [{"key": NVIDIA_PCI_LABEL, "operator": "In", "values": ["true"]}]})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


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
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        docs = [doc for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader) if isinstance(doc, dict)]
        _PARSED_MANIFESTS[key] = marshal.dumps(docs)
    objects: list[dict[str, Any]] = marshal.loads(_PARSED_MANIFESTS[key])
    return objects


def mpi_operator_manifest(version: str) -> Path:
    pinned = charts_lock.artifact("mpi-operator")
    if version != pinned.version:  # the spec already refuses this; a direct caller gets the same answer
        raise ValueError(f"mpi-operator {version!r} is not pinned; the lock pins {pinned.version}")
    return pinned.artifact_dir / "mpi-operator.yaml"


def device_plugin_configs(addons: AddonsSpec) -> dict[str, str]:
    """Named device plugin configs; nodes pick one with the nvidia.com/device-plugin.config label."""
    mig_strategy = addons.gpu.mig.strategy if addons.gpu.mig is not None else "none"
    configs = {"default": yaml.safe_dump({"version": "v1", "flags": {"migStrategy": mig_strategy}}, sort_keys=False)}
    ts = addons.gpu.time_slicing
    if ts is not None:
        configs[TIME_SLICING_CONFIG_NAME] = yaml.safe_dump(
            {
                "version": "v1",
                "flags": {"migStrategy": "none"},
                "sharing": {
                    "timeSlicing": {
                        # Keep the resource name nvidia.com/gpu so workloads need no change between pools.
                        "renameByDefault": False,
                        "resources": [{"name": "nvidia.com/gpu", "replicas": ts.replicas}],
                    }
                },
            },
            sort_keys=False,
        )
    return configs


def gpu_alert_rules(addons: AddonsSpec) -> list[dict[str, Any]]:
    """Prometheus alerting rules on DCGM metrics: idle spend, XID errors, high temperature."""
    alerts = addons.observability.alerts
    idle_for = f"{alerts.idle_for_hours:g}h"
    fatal = " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {x}" for x in FATAL_XIDS)
    return [
        {
            "alert": "GpuIdle",
            "expr": f"avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL) < {alerts.idle_utilization_percent:g}",
            "for": idle_for,
            "labels": {"severity": "warning", "category": "cost"},
            "annotations": {
                "summary": "GPUs on {{ $labels.Hostname }} idle for " + idle_for,
                "description": f"Average GPU utilisation below {alerts.idle_utilization_percent:g}% for "
                f"{idle_for}: the node is billed while idle. Scale the pool down or release the reservation.",
            },
        },
        {
            "alert": "GpuXidError",
            "expr": "max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0",
            "for": "1m",
            "labels": {"severity": "warning", "category": "health"},
            "annotations": {
                "summary": "XID {{ $value }} on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}",
                "description": "The driver reported an XID error; check `dmesg` and the DCGM health of the node.",
            },
        },
        {
            "alert": "GpuFatalXidError",
            "expr": f"count by (Hostname, gpu) ({fatal}) > 0",
            "for": "0m",
            "labels": {"severity": "critical", "category": "health"},
            "annotations": {
                "summary": "Fatal XID on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}",
                "description": f"XIDs {list(FATAL_XIDS)} mean broken GPU memory, NVLink or bus: cordon and "
                "replace the node (do not repair in place).",
            },
        },
        {
            "alert": "GpuHighTemperature",
            "expr": f"max by (Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP) > {alerts.max_temperature_celsius:g}",
            "for": "5m",
            "labels": {"severity": "warning", "category": "health"},
            "annotations": {
                "summary": "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} at {{ $value }} C",
                "description": f"Above {alerts.max_temperature_celsius:g} C for 5 minutes: the GPU throttles "
                "its clocks and may fail.",
            },
        },
    ]


def gpu_dashboard() -> dict[str, Any]:
    """Grafana dashboard for the DCGM exporter: utilisation, memory, temperature, power, XID errors."""

    def panel(pid: int, title: str, expr: str, unit: str, x: int, y: int, legend: str, kind: str = "timeseries"):
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

    sel = '{Hostname=~"$node", gpu=~"$gpu"}'
    per_gpu = "{{Hostname}} / GPU {{gpu}}"
    return {
        "uid": "gpucloud-gpus",
        "title": "GPU fleet (DCGM)",
        "tags": ["gpu", "dcgm", "gpucloud"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
                {
                    "name": "node",
                    "type": "query",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "query": "label_values(DCGM_FI_DEV_GPU_UTIL, Hostname)",
                    "includeAll": True,
                    "multi": True,
                    "refresh": 2,
                },
                {
                    "name": "gpu",
                    "type": "query",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "query": 'label_values(DCGM_FI_DEV_GPU_UTIL{Hostname=~"$node"}, gpu)',
                    "includeAll": True,
                    "multi": True,
                    "refresh": 2,
                },
            ]
        },
        "panels": [
            panel(1, "GPU utilisation", f"DCGM_FI_DEV_GPU_UTIL{sel}", "percent", 0, 0, per_gpu),
            panel(
                2,
                "GPU memory used",
                f"DCGM_FI_DEV_FB_USED{sel} / (DCGM_FI_DEV_FB_USED{sel} + DCGM_FI_DEV_FB_FREE{sel}) * 100",
                "percent",
                12,
                0,
                per_gpu,
            ),
            panel(3, "GPU temperature", f"DCGM_FI_DEV_GPU_TEMP{sel}", "celsius", 0, 8, per_gpu),
            panel(4, "GPU power", f"DCGM_FI_DEV_POWER_USAGE{sel}", "watt", 12, 8, per_gpu),
            panel(
                5,
                "XID errors (last XID per GPU)",
                f"max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS{sel})",
                "none",
                0,
                16,
                per_gpu,
                "stat",
            ),
            panel(
                6,
                "Fleet average utilisation",
                f"avg(DCGM_FI_DEV_GPU_UTIL{sel})",
                "percent",
                12,
                16,
                "average",
                "gauge",
            ),
        ],
    }


class GpuAddons(pulumi.ComponentResource):
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
        self.releases: dict[str, k8s.helm.v3.Release] = {}
        self.namespaces: dict[str, k8s.core.v1.Namespace] = {}

        self.gpu_namespace = f"{prefix}{'gpu-operator' if addons.gpu.use == 'gpu-operator' else 'nvidia-device-plugin'}"
        self.monitoring_namespace = f"{prefix}monitoring"
        self._namespace("gpu", self.gpu_namespace)
        self._gpu_stack()
        self._efa_plugin()

        self.prometheus_server_url: pulumi.Output[str] | str | None = None
        self.alert_topic_arn: pulumi.Input[str] | None = None
        self.storage_class: k8s.storage.v1.StorageClass | None = None
        self.ebs_csi_driver: aws.eks.Addon | None = None
        self.keda_trigger_authentication: str | None = None
        self.amp_workspace_arn: pulumi.Output[str] | None = None
        self.amp_workspace_id: pulumi.Output[str] | None = None
        self.scraper: aws.amp.Scraper | None = None
        self.prometheus_rule: k8s.apiextensions.CustomResource | None = None
        self.dashboard: k8s.core.v1.ConfigMap | None = None
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

        self.container_insights: aws.eks.Addon | None = None
        if obs.enable_container_insights:
            self._container_insights()
        self.log_group_name: pulumi.Output[str] | None = None
        if obs.fluent_bit.enabled:
            self._fluent_bit()

        self.cluster_autoscaler_role_arn: pulumi.Output[str] | None = None
        self.mpi_operator: dict[str, pulumi.CustomResource] = {}
        if self.autoscaler == "cluster-autoscaler":
            self._cluster_autoscaler()
        if addons.autoscaling.keda.enabled:
            self._keda()
        if addons.mpi_operator_enabled:
            self._mpi_operator()

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

    # -- helpers ---------------------------------------------------------------------------------------

    def _k8s(self, **kwargs: Any) -> pulumi.ResourceOptions:
        return child(self, provider=self._cluster.k8s_provider, **kwargs)

    def _namespace(self, role: str, name: str) -> k8s.core.v1.Namespace:
        ns = k8s.core.v1.Namespace(
            f"{self._name}-{role}-ns",
            metadata={"name": name, "labels": {"app.kubernetes.io/managed-by": "gpucloud"}},
            opts=self._k8s(),
        )
        self.namespaces[name] = ns
        return ns

    def _release(
        self,
        role: str,
        chart: str,
        version: str,
        namespace: str,
        values: dict[str, Any],
        depends_on: list[pulumi.Resource] | None = None,
    ) -> k8s.helm.v3.Release:
        # Coordinates from the charts lock: an OCI chart is its URL with no repository_opts.
        pinned = charts_lock.pin(chart, version)
        chart_ref, repository_opts = pinned.release_chart, pinned.repository_opts
        deps: list[pulumi.Resource] = list(depends_on or [])
        if namespace in self.namespaces:
            deps.append(self.namespaces[namespace])
        release = k8s.helm.v3.Release(
            f"{self._name}-{role}",
            name=role,
            chart=chart_ref,
            version=version,
            repository_opts=repository_opts,
            namespace=namespace,
            create_namespace=False,
            # Rolled-back failed upgrades leave the previous working version running on the GPU nodes.
            atomic=True,
            cleanup_on_fail=True,
            timeout=900,
            values=values,
            opts=self._k8s(depends_on=deps),
        )
        self.releases[role] = release
        return release

    def _pod_identity_role(
        self, role: str, namespace: str, service_account: str, policy: pulumi.Input[str] | None, managed: list[str]
    ) -> aws.iam.Role:
        iam_role = aws.iam.Role(
            f"{self._name}-{role}-role",
            assume_role_policy=POD_IDENTITY_TRUST,
            description=f"Pod Identity role of {namespace}/{service_account}",
            tags=self._config.tags,
            opts=child(self),
        )
        if policy is not None:
            aws.iam.RolePolicy(f"{self._name}-{role}-policy", role=iam_role.name, policy=policy, opts=child(self))
        for i, arn in enumerate(managed):
            aws.iam.RolePolicyAttachment(
                f"{self._name}-{role}-managed-{i}", role=iam_role.name, policy_arn=arn, opts=child(self)
            )
        aws.eks.PodIdentityAssociation(
            f"{self._name}-{role}-pod-identity",
            cluster_name=self._cluster.name,
            namespace=namespace,
            service_account=service_account,
            role_arn=iam_role.arn,
            tags=self._config.tags,
            opts=child(self),
        )
        return iam_role

    def _arn_prefix(self, service: str) -> pulumi.Output[str]:
        account, partition = account_and_partition(self)
        return pulumi.Output.concat("arn:", partition, f":{service}:{self._config.region}:", account)

    # -- GPU and EFA device plugins -------------------------------------------------------------------

    def _gpu_stack(self) -> None:
        addons = self._config.addons
        gpu = addons.gpu
        configs = device_plugin_configs(addons)
        self.device_plugin_config = k8s.core.v1.ConfigMap(
            f"{self._name}-device-plugin-config",
            metadata={"name": "nvidia-device-plugin-configs", "namespace": self.gpu_namespace},
            data=configs,
            opts=self._k8s(depends_on=[self.namespaces[self.gpu_namespace]]),
        )
        plugin_config = {"name": "nvidia-device-plugin-configs", "default": "default"}
        kps = addons.observability.metrics == "kube-prometheus-stack"
        if gpu.use == "device-plugin":
            values: dict[str, Any] = {
                "gfd": {"enabled": gpu.enable_gpu_feature_discovery},
                # The chart declares NFD with `alias: nfd`, so its values live under `nfd` (values under
                # `node-feature-discovery` reach nothing). NFD always runs: the device plugin's own affinity
                # selects nodes by NFD's pci-10de label, and the EFA plugin by the EFA rule's label.
                "nfd": {"enabled": True, **nfd_values()},
                "config": plugin_config,
                "tolerations": [GPU_TOLERATION, {"key": "CriticalAddonsOnly", "operator": "Exists"}],
                "priorityClassName": "system-node-critical",
            }
            self._release(
                "nvidia-device-plugin",
                "nvidia-device-plugin",
                gpu.device_plugin_version,
                self.gpu_namespace,
                values,
                depends_on=[self.device_plugin_config],
            )
            return
        dcgm = addons.observability.enable_dcgm_exporter
        operator_values: dict[str, Any] = {
            # The EKS GPU AMIs ship the driver and the container toolkit; a second driver would fight them.
            "driver": {"enabled": not gpu.driver_preinstalled},
            "toolkit": {"enabled": not gpu.driver_preinstalled},
            "nfd": {"enabled": True},
            # No alias in this chart: the NFD sub-chart reads the `node-feature-discovery` key.
            "node-feature-discovery": nfd_values(),
            "gfd": {"enabled": gpu.enable_gpu_feature_discovery},
            "devicePlugin": {"enabled": True, "config": plugin_config},
            "dcgm": {"enabled": dcgm},
            "dcgmExporter": {
                "enabled": dcgm,
                "serviceMonitor": {"enabled": dcgm and kps, "interval": "15s", "honorLabels": True},
            },
            "migManager": {"enabled": gpu.mig is not None},
            "daemonsets": {"tolerations": [GPU_TOLERATION], "priorityClassName": "system-node-critical"},
        }
        if gpu.mig is not None:
            operator_values["mig"] = {"strategy": gpu.mig.strategy}
            # Profiles are applied only to nodes labelled nvidia.com/mig.config; everything else stays whole.
            operator_values["migManager"]["config"] = {"default": "all-disabled"}
        self._release(
            "gpu-operator",
            "gpu-operator",
            gpu.gpu_operator_version,
            self.gpu_namespace,
            operator_values,
            depends_on=[self.device_plugin_config],
        )

    def _efa_plugin(self) -> None:
        efa_types = sorted({t for p in self._config.pools if p.efa.enabled for t in p.instance_types})
        self.efa_instance_types = efa_types
        if not efa_types or not self._config.addons.efa.enabled:
            return
        values = {
            # Scheduled only where EFA exists: elsewhere the plugin fails with "No devices found". The chart
            # never reads `affinity`; its DaemonSet builds the node affinity from supportedInstanceLabels (each
            # key In the values), so the EFA pools' instance types go there, plus NFD's EFA label.
            "nodeSelector": {EFA_PRESENT_LABEL: "true"},
            "supportedInstanceLabels": {"keys": [INSTANCE_TYPE_LABEL], "values": efa_types},
            # EFA pools are GPU (p4d/p5) or Neuron (trn1/trn2) pools, each tainted for its accelerator.
            "tolerations": [GPU_TOLERATION, NEURON_TOLERATION],
        }
        self._release(
            "aws-efa-k8s-device-plugin",
            "aws-efa-k8s-device-plugin",
            self._config.addons.efa.version,
            "kube-system",
            values,
        )

    # -- metrics, dashboards, alerts --------------------------------------------------------------------

    def _dcgm_exporter(self) -> None:
        kps = self._config.addons.observability.metrics == "kube-prometheus-stack"
        values = {
            "serviceMonitor": {"enabled": kps, "interval": "15s", "honorLabels": True},
            "tolerations": [GPU_TOLERATION],
            # Not nvidia.com/gpu.present: only the GPU Operator sets that label, so in the device-plugin setup
            # the exporter would never schedule.
            "affinity": gpu_node_affinity(self._config.pools),
            # honorLabels above keeps the exporter's pod/namespace labels (from the kubelet pod-resources API)
            # instead of renaming them exported_*, so KEDA and alerts select the pod that uses the GPU.
            "kubeletPath": "/var/lib/kubelet/pod-resources",
        }
        deps: list[pulumi.Resource] = [self.releases[KPS_RELEASE]] if kps else []
        self._release(
            "dcgm-exporter",
            "dcgm-exporter",
            self._config.addons.observability.dcgm_exporter_version,
            self.monitoring_namespace,
            values,
            depends_on=deps,
        )

    def _alert_topic(self, publisher_service: str | None = None) -> pulumi.Input[str]:
        """The SNS topic alerts go to: the stack's existing one, or one created here with the addresses subscribed.

        `publisher_service` is the AWS service principal that publishes (AMP's alert manager); it needs a topic
        policy, and the topic is not encrypted at rest: the cluster key's policy does not let that service use the
        key, and an AWS managed key cannot be granted to it. Messages carry alert names and labels only. An
        in-cluster Alertmanager publishes as its Pod Identity role, which may use the cluster key.
        """
        alerts = self._config.addons.observability.alerts
        if alerts.sns_topic_arn is not None:
            self.alert_topic_arn = alerts.sns_topic_arn
            return alerts.sns_topic_arn
        topic = aws.sns.Topic(
            f"{self._name}-alerts",
            display_name="gpucloud GPU alerts",
            kms_master_key_id=None if publisher_service else self._cluster.kms_key_arn,
            tags=self._config.tags,
            opts=child(self),
        )
        for i, address in enumerate(alerts.emails or self._config.alert_emails):
            aws.sns.TopicSubscription(
                f"{self._name}-alerts-email-{i}", topic=topic.arn, protocol="email", endpoint=address, opts=child(self)
            )
        if publisher_service is not None:
            account, _ = account_and_partition(self)
            aws.sns.TopicPolicy(
                f"{self._name}-alerts-policy",
                arn=topic.arn,
                policy=pulumi.Output.all(topic.arn, account).apply(
                    lambda a: json.dumps(
                        {
                            "Version": "2012-10-17",
                            "Statement": [
                                {
                                    "Sid": "AlertManagerPublishes",
                                    "Effect": "Allow",
                                    "Principal": {"Service": publisher_service},
                                    "Action": ["sns:Publish", "sns:GetTopicAttributes"],
                                    "Resource": a[0],
                                    "Condition": {"StringEquals": {"aws:SourceAccount": a[1]}},
                                }
                            ],
                        }
                    )
                ),
                opts=child(self),
            )
        self.alert_topic_arn = topic.arn
        return topic.arn

    def _alertmanager_config(self, topic_arn: pulumi.Input[str]) -> dict[str, Any]:
        """Route every alert to SNS; the chart's always-firing Watchdog stays on the silent receiver."""
        return {
            "route": {
                "receiver": "sns",
                "group_by": ["alertname", "namespace"],
                "routes": [{"receiver": "null", "matchers": ['alertname = "Watchdog"']}],
            },
            "receivers": [
                {"name": "null"},
                {
                    "name": "sns",
                    "sns_configs": [
                        {
                            "topic_arn": topic_arn,
                            # SigV4 with the default credential chain, i.e. the Pod Identity role below.
                            "sigv4": {"region": self._config.region},
                            "subject": "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}",
                            "send_resolved": True,
                        }
                    ],
                },
            ],
        }

    def _ebs_storage(self) -> k8s.storage.v1.StorageClass:
        """EBS CSI driver (managed add-on, Pod Identity) and an encrypted gp3 StorageClass for stateful add-ons."""
        key_arn = self._cluster.kms_key_arn
        # The driver creates and attaches volumes encrypted with the cluster key: it needs the key's data
        # actions and grants for the EC2 attachments (the key policy delegates to IAM).
        policy = pulumi.Output.from_input(key_arn).apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": [
                                "kms:Encrypt",
                                "kms:Decrypt",
                                "kms:ReEncrypt*",
                                "kms:GenerateDataKey*",
                                "kms:DescribeKey",
                            ],
                            "Resource": arn,
                        },
                        {
                            "Effect": "Allow",
                            "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"],
                            "Resource": arn,
                            "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
                        },
                    ],
                }
            )
        )
        _, partition = account_and_partition(self)
        managed = partition.apply(lambda p: f"arn:{p}:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy")
        role = aws.iam.Role(
            f"{self._name}-ebs-csi-role",
            assume_role_policy=POD_IDENTITY_TRUST,
            description=f"Pod Identity role of kube-system/{EBS_CSI_SERVICE_ACCOUNT}",
            tags=self._config.tags,
            opts=child(self),
        )
        kms = aws.iam.RolePolicy(f"{self._name}-ebs-csi-kms", role=role.name, policy=policy, opts=child(self))
        attach = aws.iam.RolePolicyAttachment(
            f"{self._name}-ebs-csi-managed-0", role=role.name, policy_arn=managed, opts=child(self)
        )
        self.ebs_csi_driver = aws.eks.Addon(
            f"{self._name}-ebs-csi-driver",
            cluster_name=self._cluster.name,
            addon_name="aws-ebs-csi-driver",
            pod_identity_associations=[{"role_arn": role.arn, "service_account": EBS_CSI_SERVICE_ACCOUNT}],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._config.tags,
            opts=child(self, depends_on=[kms, attach]),
        )
        self.storage_class = k8s.storage.v1.StorageClass(
            f"{self._name}-gp3",
            metadata={"name": EBS_STORAGE_CLASS},
            provisioner="ebs.csi.aws.com",
            parameters={"type": "gp3", "encrypted": "true", "kmsKeyId": key_arn},
            # A volume is created in the AZ of the node its pod lands on, never in one it cannot attach from.
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
            reclaim_policy="Retain" if self._config.protect_data else "Delete",
            opts=self._k8s(depends_on=[self.ebs_csi_driver]),
        )
        return self.storage_class

    def _grafana_admin_secret(self) -> tuple[str, list[pulumi.Resource]]:
        """The Secret Grafana reads its admin credentials from (admin.existingSecret of the grafana sub-chart)."""
        existing = self._config.addons.observability.grafana_admin_secret
        if existing is not None:
            return existing, []
        secret = k8s.core.v1.Secret(
            f"{self._name}-grafana-admin",
            metadata={"name": GRAFANA_ADMIN_SECRET, "namespace": self.monitoring_namespace},
            type="Opaque",
            string_data={
                "admin-user": "admin",
                # Generated once: ignore_changes keeps the first password, so later runs never rotate it.
                "admin-password": pulumi.Output.secret(secrets.token_urlsafe(24)),
            },
            opts=self._k8s(
                depends_on=[self.namespaces[self.monitoring_namespace]],
                ignore_changes=["stringData", "data"],
                additional_secret_outputs=["stringData", "data"],
            ),
        )
        return GRAFANA_ADMIN_SECRET, [secret]

    def _kube_prometheus_stack(self) -> None:
        obs = self._config.addons.observability
        storage_class = self._ebs_storage()
        grafana_secret, grafana_deps = self._grafana_admin_secret()
        topic_arn = self._alert_topic()
        self._alertmanager_publisher(topic_arn)
        values = {
            "prometheus": {
                "prometheusSpec": {
                    "retention": obs.prometheus_retention,
                    # Pick up every ServiceMonitor/PrometheusRule, not only those labelled with this release.
                    "serviceMonitorSelectorNilUsesHelmValues": False,
                    "podMonitorSelectorNilUsesHelmValues": False,
                    "ruleSelectorNilUsesHelmValues": False,
                    # The TSDB on a persistent volume: on the node's root disk it filled the disk and was lost
                    # with every node replacement.
                    "storageSpec": {
                        "volumeClaimTemplate": {
                            "spec": {
                                "storageClassName": EBS_STORAGE_CLASS,
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": f"{obs.prometheus_storage_gib}Gi"}},
                            }
                        }
                    },
                }
            },
            "alertmanager": {
                "serviceAccount": {"create": True, "name": ALERTMANAGER_SERVICE_ACCOUNT},
                "config": self._alertmanager_config(topic_arn),
            },
            "grafana": {
                # The parent chart's adminPassword default is a published string; credentials come from a Secret.
                "admin": {"existingSecret": grafana_secret, "userKey": "admin-user", "passwordKey": "admin-password"},
                "sidecar": {
                    "dashboards": {
                        "enabled": True,
                        "label": "grafana_dashboard",
                        "labelValue": "1",
                        "searchNamespace": "ALL",
                    }
                },
            },
        }
        release = self._release(
            KPS_RELEASE,
            KPS_RELEASE,
            obs.kube_prometheus_stack_version,
            self.monitoring_namespace,
            values,
            depends_on=[storage_class, *grafana_deps],
        )
        self.prometheus_server_url = (
            f"http://{KPS_RELEASE}-prometheus.{self.monitoring_namespace}.svc.cluster.local:9090"
        )
        self.dashboard = k8s.core.v1.ConfigMap(
            f"{self._name}-gpu-dashboard",
            metadata={
                "name": "gpucloud-gpu-dashboard",
                "namespace": self.monitoring_namespace,
                "labels": {"grafana_dashboard": "1"},
            },
            data={"gpucloud-gpus.json": json.dumps(gpu_dashboard(), indent=1)},
            opts=self._k8s(depends_on=[self.namespaces[self.monitoring_namespace]]),
        )
        if obs.alerts.enabled:
            self.prometheus_rule = k8s.apiextensions.CustomResource(
                f"{self._name}-gpu-alerts",
                api_version="monitoring.coreos.com/v1",
                kind="PrometheusRule",
                metadata={
                    "name": "gpucloud-gpu-alerts",
                    "namespace": self.monitoring_namespace,
                    "labels": {"release": KPS_RELEASE},
                },
                spec={"groups": [{"name": "gpucloud-gpu", "rules": gpu_alert_rules(self._config.addons)}]},
                # The PrometheusRule CRD comes with the chart.
                opts=self._k8s(depends_on=[release]),
            )

    def _alertmanager_publisher(self, topic_arn: pulumi.Input[str]) -> None:
        """Pod Identity for Alertmanager: publish to the alert topic and use the key that encrypts it."""
        statements: list[dict[str, Any]] = [{"Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn}]
        if self._config.addons.observability.alerts.sns_topic_arn is None:
            statements.append(
                {
                    "Effect": "Allow",
                    "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
                    "Resource": self._cluster.kms_key_arn,
                }
            )
        policy = pulumi.Output.from_input(statements).apply(
            lambda st: json.dumps({"Version": "2012-10-17", "Statement": st})
        )
        self._pod_identity_role("alertmanager", self.monitoring_namespace, ALERTMANAGER_SERVICE_ACCOUNT, policy, [])

    def _amp(self) -> None:
        cluster = self._cluster
        tags = self._config.tags
        workspace = aws.amp.Workspace(
            f"{self._name}-amp",
            alias=f"{self._name}-gpu-metrics",
            kms_key_arn=cluster.kms_key_arn,
            tags=tags,
            opts=child(self),
        )
        self.amp_workspace_arn = workspace.arn
        self.amp_workspace_id = workspace.id
        self.prometheus_server_url = workspace.prometheus_endpoint
        scrape = {
            "global": {"scrape_interval": "30s"},
            "scrape_configs": [
                {
                    "job_name": "dcgm-exporter",
                    "kubernetes_sd_configs": [{"role": "pod"}],
                    "relabel_configs": [
                        {
                            "source_labels": ["__meta_kubernetes_pod_container_port_number"],
                            "action": "keep",
                            "regex": str(DCGM_PORT),
                        },
                        {
                            "source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"],
                            "action": "keep",
                            "regex": "dcgm-exporter|nvidia-dcgm-exporter",
                        },
                        {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node"},
                    ],
                }
            ],
        }
        cluster_arn = cluster.extra.get("arn") or pulumi.Output.concat(
            self._arn_prefix("eks"), ":cluster/", cluster.name
        )
        # The managed collector needs subnets in at least two AZs.
        subnets = cluster.subnet_ids()
        self.scraper = aws.amp.Scraper(
            f"{self._name}-scraper",
            alias=f"{self._name}-dcgm",
            source={
                "eks": {
                    "cluster_arn": cluster_arn,
                    "subnet_ids": subnets,
                    "security_group_ids": [cluster.node_security_group_id],
                }
            },
            destination={"amp": {"workspace_arn": workspace.arn}},
            scrape_configuration=yaml.safe_dump(scrape, sort_keys=False),
            tags=tags,
            opts=child(self),
        )
        # The scraper reads the Kubernetes API as this user; EKS maps its service-linked role to it.
        aws.eks.AccessEntry(
            f"{self._name}-scraper-access",
            cluster_name=cluster.name,
            principal_arn=self.scraper.role_arn,
            user_name="aps-collector-user",
            tags=tags,
            opts=child(self),
        )
        k8s.rbac.v1.ClusterRole(
            f"{self._name}-scraper-role",
            metadata={"name": "aps-collector-role"},
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""],
                    resources=["nodes", "nodes/proxy", "nodes/metrics", "services", "endpoints", "pods", "configmaps"],
                    verbs=["get", "list", "watch"],
                ),
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=["networking.k8s.io"], resources=["ingresses"], verbs=["get", "list", "watch"]
                ),
                k8s.rbac.v1.PolicyRuleArgs(non_resource_urls=["/metrics"], verbs=["get"]),
            ],
            opts=self._k8s(),
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{self._name}-scraper-binding",
            metadata={"name": "aps-collector-user-role-binding"},
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="aps-collector-role"
            ),
            subjects=[
                k8s.rbac.v1.SubjectArgs(kind="User", name="aps-collector-user", api_group="rbac.authorization.k8s.io")
            ],
            opts=self._k8s(),
        )
        if self._config.addons.observability.alerts.enabled:
            topic_arn = self._alert_topic(publisher_service="aps.amazonaws.com")
            # Rules without an alert manager definition fire into nothing; AMP's alert manager speaks SNS only.
            aws.amp.AlertManagerDefinition(
                f"{self._name}-alert-manager",
                workspace_id=workspace.id,
                definition=pulumi.Output.from_input(topic_arn).apply(
                    lambda arn: yaml.safe_dump(
                        {
                            "alertmanager_config": yaml.safe_dump(
                                {
                                    "route": {"receiver": "sns", "group_by": ["alertname"]},
                                    "receivers": [
                                        {
                                            "name": "sns",
                                            "sns_configs": [
                                                {
                                                    "topic_arn": arn,
                                                    "sigv4": {"region": self._config.region},
                                                    "send_resolved": True,
                                                }
                                            ],
                                        }
                                    ],
                                },
                                sort_keys=False,
                            )
                        },
                        sort_keys=False,
                    )
                ),
                opts=child(self),
            )
            aws.amp.RuleGroupNamespace(
                f"{self._name}-gpu-alerts",
                name="gpucloud-gpu-alerts",
                workspace_id=workspace.id,
                data=yaml.safe_dump(
                    {"groups": [{"name": "gpucloud-gpu", "rules": gpu_alert_rules(self._config.addons)}]},
                    sort_keys=False,
                ),
                tags=tags,
                opts=child(self),
            )

    def _container_insights(self) -> None:
        namespace, service_account = "amazon-cloudwatch", "cloudwatch-agent"
        role = aws.iam.Role(
            f"{self._name}-container-insights-role",
            assume_role_policy=POD_IDENTITY_TRUST,
            description=f"Pod Identity role of {namespace}/{service_account}",
            tags=self._config.tags,
            opts=child(self),
        )
        aws.iam.RolePolicyAttachment(
            f"{self._name}-container-insights-managed-0",
            role=role.name,
            policy_arn=aws.get_partition_output().partition.apply(
                lambda p: f"arn:{p}:iam::aws:policy/CloudWatchAgentServerPolicy"
            ),
            opts=child(self),
        )
        self.container_insights = aws.eks.Addon(
            f"{self._name}-container-insights",
            cluster_name=self._cluster.name,
            addon_name="amazon-cloudwatch-observability",
            pod_identity_associations=[{"role_arn": role.arn, "service_account": service_account}],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._config.tags,
            opts=child(self),
        )

    def _fluent_bit(self) -> None:
        fb = self._config.addons.observability.fluent_bit
        namespace = f"{self._config.addons.namespace_prefix}logging"
        self._namespace("logging", namespace)
        log_group = aws.cloudwatch.LogGroup(
            f"{self._name}-container-logs",
            name=f"/gpucloud/{self._name}/containers",
            retention_in_days=fb.retention_days,
            kms_key_id=self._cluster.kms_key_arn,
            tags=self._config.tags,
            opts=child(self),
        )
        self.log_group_name = log_group.name
        policy = log_group.arn.apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                            "Resource": [arn, f"{arn}:*"],
                        },
                        {"Effect": "Allow", "Action": ["logs:DescribeLogGroups"], "Resource": "*"},
                    ],
                }
            )
        )
        self._pod_identity_role("fluent-bit", namespace, "aws-for-fluent-bit", policy, [])
        values = {
            "serviceAccount": {"create": True, "name": "aws-for-fluent-bit"},
            "cloudWatch": {"enabled": False},
            "cloudWatchLogs": {
                "enabled": True,
                "region": self._config.region,
                "logGroupName": log_group.name,
                "autoCreateGroup": False,
            },
            "firehose": {"enabled": False},
            "kinesis": {"enabled": False},
            "elasticsearch": {"enabled": False},
            # Logs of GPU jobs matter most; run on every node whatever its taints.
            "tolerations": [{"operator": "Exists"}],
        }
        self._release("aws-for-fluent-bit", "aws-for-fluent-bit", fb.version, namespace, values)

    # -- autoscaling ---------------------------------------------------------------------------------------

    def _cluster_autoscaler(self) -> None:
        scaling = self._config.addons.autoscaling
        cluster_name = self._cluster.name
        policy = pulumi.Output.from_input(cluster_name).apply(
            lambda name: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "ScaleOwnedGroups",
                            "Effect": "Allow",
                            "Action": [
                                "autoscaling:SetDesiredCapacity",
                                "autoscaling:TerminateInstanceInAutoScalingGroup",
                            ],
                            "Resource": "*",
                            # Only groups tagged for this cluster: a shared account's other clusters stay untouched.
                            "Condition": {
                                "StringEquals": {
                                    f"aws:ResourceTag/k8s.io/cluster-autoscaler/{name}": "owned",
                                    "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
                                }
                            },
                        },
                        {
                            "Sid": "Describe",
                            "Effect": "Allow",
                            "Action": [
                                "autoscaling:DescribeAutoScalingGroups",
                                "autoscaling:DescribeAutoScalingInstances",
                                "autoscaling:DescribeLaunchConfigurations",
                                "autoscaling:DescribeScalingActivities",
                                "autoscaling:DescribeTags",
                                "ec2:DescribeImages",
                                "ec2:DescribeInstanceTypes",
                                "ec2:DescribeLaunchTemplateVersions",
                                "ec2:GetInstanceTypesFromInstanceRequirements",
                                "eks:DescribeNodegroup",
                            ],
                            "Resource": "*",
                        },
                    ],
                }
            )
        )
        role = self._pod_identity_role("cluster-autoscaler", "kube-system", "cluster-autoscaler", policy, [])
        self.cluster_autoscaler_role_arn = role.arn
        # Reserved > on-demand (its group max is the pool's on-demand share) > spot > the rest; the reasons are
        # with expander_priorities, next to the node group roles the regexes match.
        from components.nodepools.capacity import expander_priorities

        priorities = expander_priorities(scaling.reserved_node_group_regex, scaling.spot_node_group_regex)
        self.priority_expander = k8s.core.v1.ConfigMap(
            f"{self._name}-ca-priorities",
            # The expander reads this exact name in the autoscaler's namespace.
            metadata={"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
            data={"priorities": yaml.safe_dump(priorities, sort_keys=False)},
            opts=self._k8s(),
        )
        values = {
            "cloudProvider": "aws",
            "awsRegion": self._config.region,
            "autoDiscovery": {"clusterName": cluster_name},
            "rbac": {"serviceAccount": {"create": True, "name": "cluster-autoscaler"}},
            "extraArgs": {
                "expander": "priority",
                "balance-similar-node-groups": True,
                "skip-nodes-with-local-storage": False,
                "skip-nodes-with-system-pods": False,
                # GPU nodes are expensive: remove them soon after they empty.
                "scale-down-unneeded-time": "10m",
                "scale-down-delay-after-add": "10m",
            },
            "priorityClassName": "system-cluster-critical",
        }
        self._release(
            "cluster-autoscaler",
            "cluster-autoscaler",
            scaling.cluster_autoscaler_version,
            "kube-system",
            values,
            depends_on=[self.priority_expander],
        )

    def _keda(self) -> None:
        scaling = self._config.addons.autoscaling
        namespace = f"{self._config.addons.namespace_prefix}keda"
        self._namespace("keda", namespace)
        release = self._release("keda", "keda", scaling.keda.version, namespace, {})
        if self.amp_workspace_arn is None:
            return
        policy = self.amp_workspace_arn.apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": ["aps:QueryMetrics", "aps:GetSeries", "aps:GetLabels", "aps:GetMetricMetadata"],
                            "Resource": arn,
                        }
                    ],
                }
            )
        )
        self._pod_identity_role("keda", namespace, "keda-operator", policy, [])
        self.keda_trigger_authentication = "gpucloud-amp"
        k8s.apiextensions.CustomResource(
            f"{self._name}-keda-amp-auth",
            api_version="keda.sh/v1alpha1",
            kind="ClusterTriggerAuthentication",
            metadata={"name": self.keda_trigger_authentication},
            # SigV4 with the KEDA operator's own Pod Identity role, which may query the AMP workspace.
            spec={"podIdentity": {"provider": "aws", "identityOwner": "keda"}},
            opts=self._k8s(depends_on=[release]),
        )

    # -- Neuron ----------------------------------------------------------------------------------------------

    def _neuron_plugin(self) -> None:
        neuron_types = sorted(
            {t for p in self._config.pools if p.specs[0].accelerator_kind == "neuron" for t in p.instance_types}
        )
        self.neuron_instance_types = neuron_types
        neuron = self._config.addons.neuron
        if not neuron_types or not neuron.enabled:
            return
        values = {
            # The chart's DaemonSet affinity is `instance-type In neuronInstances`; its default list predates
            # trn2, so the pools' own types go there.
            "neuronInstances": neuron_types,
            "devicePlugin": {
                "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, NEURON_TOLERATION],
            },
            # The problem detector deploys into neuron-healthcheck-system, which the chart does not create, and
            # needs CloudWatch permissions; the scheduler extension is only for topology-aware placement.
            "npd": {"enabled": False},
            "scheduler": {"enabled": False},
        }
        self._release("neuron-device-plugin", NEURON_CHART, neuron.version, "kube-system", values)

    # -- MPI operator ------------------------------------------------------------------------------------------

    def _mpi_operator(self) -> None:
        """The MPI operator v2 release manifest as typed resources (it ships no chart), CRD and RBAC first."""
        version = self._config.addons.mpi_operator.version
        path = mpi_operator_manifest(version)
        namespace: k8s.core.v1.Namespace | None = None
        for doc in manifest_objects(path):
            api_version, kind = doc["apiVersion"], doc["kind"]
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
