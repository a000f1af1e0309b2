"""GPU, EFA and Neuron device plugins: the NVIDIA device plugin or GPU operator with NFD, the EFA plugin, Neuron."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s
import yaml

from gpucloud.catalog.registries import eks_registry
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.addons.common import (
    EFA_PRESENT_LABEL,
    GPU_TOLERATION,
    INSTANCE_TYPE_LABEL,
    NEURON_CHART,
    NEURON_TOLERATION,
    NVIDIA_PCI_LABEL,
    POOL_LABEL,
)
from gpucloud.spec import AddonsSpec, NodePoolSpec
from gpucloud.spec.addons import TIME_SLICING_CONFIG_NAME

# The EFA device plugin's repository in the EKS add-on registries (the chart's values.yaml image.repository path).
EFA_PLUGIN_IMAGE_PATH = "eks/aws-efa-k8s-device-plugin"


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


class DevicePluginsMixin(AddonsBase):
    """Makes accelerators and EFA interfaces schedulable resources."""

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
        # The chart's default image is the us-west-2 copy: a node elsewhere would pull it across Regions, over the
        # NAT gateway. EKS replicates the image to every Region it serves; the stack's own Region's copy is used.
        registry = eks_registry(self._config.region)
        if registry:
            values["image"] = {"repository": f"{registry}/{EFA_PLUGIN_IMAGE_PATH}"}
        self._release(
            "aws-efa-k8s-device-plugin",
            "aws-efa-k8s-device-plugin",
            self._config.addons.efa.version,
            "kube-system",
            values,
        )

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
