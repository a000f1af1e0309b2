"""Kubernetes add-ons section of the stack spec: GPU, EFA and Neuron device plugins, observability, autoscaling,
the MPI operator and the acceptance tests run on new GPU nodes.

Chart versions default to the charts lock (gpucloud/charts/lock.yaml), the one place a chart is pinned together
with its vendored source; a stack may name only the pinned version, so an upgrade is a reviewed lock change plus
the vendored copy, never a surprise from an upstream `latest` nor a version nothing here has rendered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, model_validator

from gpucloud.catalog.accelerators import accelerator
from gpucloud.charts import lock as charts_lock
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.chart_pins import (
    ClusterAutoscalerVersion,
    DevicePluginVersion,
    EfaPluginVersion,
    GpuOperatorVersion,
    KedaVersion,
    KueueVersion,
    LoadBalancerControllerVersion,
    MetricsServerVersion,
    MpiOperatorVersion,
    NeuronPluginVersion,
    OpenCostVersion,
    reject_removed,
)
from gpucloud.spec.common import Name
from gpucloud.spec.observability import ObservabilitySpec
from gpucloud.spec.pools import NodePoolSpec

# Node label the NVIDIA device plugin reads to pick a named sharing config for that node.
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# Node label the GPU Operator's MIG manager reads to apply a MIG profile.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
TIME_SLICING_CONFIG_NAME = "time-sliced"

GpuStack = Literal["device-plugin", "gpu-operator"]


def _mig_capable(name: str) -> bool:
    found = accelerator(name)
    return found is not None and found.mig


Autoscaler = Literal["cluster-autoscaler", "karpenter", "none"]
MpiApiVersion = Literal["kubeflow.org/v2beta1", "kubeflow.org/v1"]


_TRAINING_OPERATOR = ("trainingOperator", "training_operator")


# A Go duration as Kueue's configuration and Kubernetes accept it (e.g. 10m, 1h30m, 90s).
_DURATION = r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$"
# Cluster Autoscaler (1.29+) treats taints with this prefix as startup taints: a template node of an empty
# group is simulated without them, and a node that still carries one is not counted as ready capacity
# (kubernetes/autoscaler release notes 1.29.0, "--startup-taint ... taint prefix"). Karpenter's startupTaints
# and the node health gate below use the same key.
HEALTH_TAINT_KEY = "startup-taint.cluster-autoscaler.kubernetes.io/gpucloud-health"
# NVIDIA's DCGM image for the node health gate and the acceptance Jobs: DCGM 4.5.2, which the GPU Operator v26.3
# pairs with the 580 driver of the EKS AL2023 NVIDIA AMIs; the ubi9 build is the one its certified OLM bundle pins
# (gpucloud/charts/images.json has the digest and its source; `pin_ref` appends it).
DCGM_IMAGE = "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubi9"


class TimeSlicingSpec(SpecModel):
    """Share each GPU between several pods on the listed pools (inference on GPUs too big for one model)."""

    replicas: int = Field(ge=2, le=48, description="Pods that share one GPU (each sees the whole GPU, no isolation).")
    pools: list[Name] = Field(min_length=1, description="Node pools whose GPUs are time-sliced.")


class MigSpec(SpecModel):
    """Partition MIG-capable GPUs (A100/H100/H200/B200) into isolated instances; needs the GPU Operator."""

    strategy: Literal["single", "mixed"] = Field(
        default="single",
        description="'single': every GPU on a node uses the same profile and pods request nvidia.com/gpu; "
        "'mixed': pods request nvidia.com/mig-<profile> resources.",
    )
    profile: str = Field(
        default="all-1g.10gb",
        pattern=r"^[a-z0-9][a-z0-9.-]*$",
        description="mig-parted profile name applied to the pools' nodes, e.g. all-1g.10gb, all-3g.40gb, all-balanced.",
    )
    pools: list[Name] = Field(min_length=1, description="Node pools whose GPUs are MIG-partitioned.")


class GpuStackSpec(SpecModel):
    """How Kubernetes discovers and schedules NVIDIA GPUs."""

    use: GpuStack = Field(
        default="device-plugin",
        description="'device-plugin': NVIDIA device plugin (+ GPU feature discovery) and a separate DCGM "
        "exporter; 'gpu-operator': the NVIDIA GPU Operator (needed for MIG).",
    )
    device_plugin_version: DevicePluginVersion = Field(
        default=charts_lock.pinned_version("nvidia-device-plugin"), description="nvidia-device-plugin chart version."
    )
    gpu_operator_version: GpuOperatorVersion = Field(
        default=charts_lock.pinned_version("gpu-operator"), description="NVIDIA gpu-operator chart version."
    )
    enable_gpu_feature_discovery: bool = Field(
        default=True,
        description="Label nodes with GPU model, memory and MIG facts (nvidia.com/gpu.product ...). Node "
        "feature discovery runs either way: the device plugin and the EFA plugin select nodes by its labels.",
    )
    driver_preinstalled: bool = Field(
        default=True,
        description="The GPU AMIs (EKS AL2023 NVIDIA, Bottlerocket NVIDIA) ship the driver and container "
        "toolkit, so the operator's driver and toolkit stay off. Set false only for a plain AMI.",
    )
    time_slicing: TimeSlicingSpec | None = Field(default=None, description="GPU time-slicing for some pools.")
    mig: MigSpec | None = Field(default=None, description="MIG partitioning for some pools (GPU Operator only).")


class EfaDevicePluginSpec(SpecModel):
    """AWS EFA device plugin; installed only when a pool has EFA, and scheduled only on EFA nodes."""

    enabled: bool = Field(default=True, description="Install the plugin when any pool has EFA enabled.")
    version: EfaPluginVersion = Field(
        default=charts_lock.pinned_version("aws-efa-k8s-device-plugin"),
        description="aws-efa-k8s-device-plugin chart version (eks-charts).",
    )


class NeuronDevicePluginSpec(SpecModel):
    """AWS Neuron device plugin (neuron-helm-chart); installed only when a pool has Trainium/Inferentia types."""

    enabled: bool = Field(default=True, description="Install the plugin when any pool has Neuron instance types.")
    version: NeuronPluginVersion = Field(
        default=charts_lock.pinned_version("neuron-helm-chart"),
        description="neuron-helm-chart version (oci://public.ecr.aws/neuron/neuron-helm-chart).",
    )


class KedaSpec(SpecModel):
    """KEDA, which scales inference deployments on DCGM GPU utilisation."""

    enabled: bool = Field(default=True, description="Install KEDA.")
    version: KedaVersion = Field(default=charts_lock.pinned_version("keda"), description="keda chart version.")


class MetricsServerSpec(SpecModel):
    """metrics-server: the resource metrics API (`kubectl top`, HorizontalPodAutoscaler on CPU/memory)."""

    enabled: bool = Field(default=True, description="Install metrics-server (EKS does not ship it).")
    version: MetricsServerVersion = Field(
        default=charts_lock.pinned_version("metrics-server"), description="metrics-server chart version."
    )
    replicas: int = Field(
        default=2,
        ge=1,
        le=5,
        description="Replicas; two with a PodDisruptionBudget keep the metrics API up while system nodes drain.",
    )


class AutoscalingSpec(SpecModel):
    """Node autoscaling for managed / self-managed pools, and workload autoscaling."""

    autoscaler: Autoscaler | None = Field(
        default=None,
        description="Node autoscaler. Unset: cluster-autoscaler when any pool is managed or self-managed, "
        "otherwise Karpenter (installed with the Karpenter pools).",
    )
    cluster_autoscaler_version: ClusterAutoscalerVersion | None = Field(
        default=None,
        description="cluster-autoscaler chart version (one the charts lock pins). Unset: the chart the versions "
        "table names for the cluster's minor (the autoscaler's minor must equal the cluster's), with its image tag "
        "where upstream ships no chart of that minor.",
    )
    reserved_node_group_regex: str = Field(
        default=".*-reserved.*|.*-capacity-block.*",
        description="Node groups (ASG names) on reserved capacity; the priority expander tries them first.",
    )
    spot_node_group_regex: str = Field(
        default=".*-spot.*", description="Spot node groups (ASG names); tried after reserved ones."
    )
    keda: KedaSpec = Field(default_factory=KedaSpec, description="KEDA workload autoscaling.")
    metrics_server: MetricsServerSpec = Field(
        default_factory=MetricsServerSpec, description="metrics-server for the resource metrics API."
    )

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        # The platform runs no inference Deployment: the KEDA ScaledObject that compares GPU utilisation with a
        # threshold belongs to each deployment, so a platform-wide number was never read.
        gone = (
            "removed: the scaling threshold belongs to each inference deployment; set "
            "inference.gpuUtilizationTargetPercent in the team stack (or "
            "InferenceDeploymentConfig.gpu_utilization_target_percent) and delete this key"
        )
        reject_removed(data, dict.fromkeys(("gpuUtilizationTargetPercent", "gpu_utilization_target_percent"), gone))
        return data


class MpiOperatorSpec(SpecModel):
    """Kubeflow MPI operator v2 (MPIJob kubeflow.org/v2beta1), installed from its vendored release manifest."""

    enabled: bool | None = Field(
        default=None,
        description="Install the operator. Unset: installed when acceptance.enableNcclTest is on (the NCCL test "
        "is an MPIJob).",
    )
    version: MpiOperatorVersion = Field(
        default=charts_lock.artifact("mpi-operator").version,
        description="mpi-operator release (deploy/v2beta1/mpi-operator.yaml, vendored).",
    )


class KueueSpec(SpecModel):
    """Kueue: queues, quotas and all-or-nothing admission for GPU jobs (chart kueue, pinned in the lock)."""

    enabled: bool = Field(
        default=False,
        description="Install Kueue with a ResourceFlavor per pool capacity flavour and one lending ClusterQueue "
        "per capacity flavour (on-demand, spot, reserved, capacity-block) in the cohort; team stacks add their "
        "own ClusterQueue and LocalQueue.",
    )
    version: KueueVersion = Field(default=charts_lock.pinned_version("kueue"), description="kueue chart version.")
    cohort: Name = Field(
        default="gpucloud",
        description="Cohort every ClusterQueue joins: teams borrow the pools' idle quota through it.",
    )
    wait_for_pods_ready_timeout: str = Field(
        default="10m",
        pattern=_DURATION,
        description="waitForPodsReady: a job admitted as a gang whose pods are not all ready within this time is "
        "evicted and requeued, so a half-scheduled multi-node job never holds GPUs (Go duration, e.g. 10m).",
    )
    fair_sharing: bool = Field(
        default=True,
        description="Kueue fair sharing: teams that borrow beyond their nominal quota are preempted first by "
        "teams below their share.",
    )


class LoadBalancerControllerSpec(SpecModel):
    """AWS Load Balancer Controller (chart aws-load-balancer-controller): NLBs for Services of type LoadBalancer."""

    enabled: bool = Field(
        default=False, description="Install the controller (Pod Identity role with the upstream IAM policy)."
    )
    version: LoadBalancerControllerVersion = Field(
        default=charts_lock.pinned_version("aws-load-balancer-controller"),
        description="aws-load-balancer-controller chart version.",
    )
    allow_internet_facing: bool = Field(
        default=False,
        description="Allow team stacks to ask for internet-facing load balancers. Off: every load balancer is "
        "internal to the VPC.",
    )


class NodeHealthSpec(SpecModel):
    """Node health gate: new GPU nodes start tainted until a DCGM diagnostic (and an EFA check) passes."""

    enabled: bool = Field(
        default=False,
        description="Start GPU nodes with a startup taint, run the health DaemonSet that removes it after the "
        "checks pass, and cordon, label and report nodes that fail (and mark them for replacement).",
    )
    diag_level: Literal[1, 2, 3] = Field(
        default=2, description="`dcgmi diag -r` level on a new node (1 ~seconds, 2 ~2 minutes, 3 ~15 minutes)."
    )
    periodic_minutes: int = Field(
        default=60,
        ge=0,
        le=10080,
        description="Re-run the quick check (`dcgmi health` and `dcgmi diag -r 1`) every this many minutes; 0 "
        "checks only at node start.",
    )
    checker_image: str = Field(
        default=DCGM_IMAGE,
        min_length=1,
        description="Image with dcgmi, nv-hostengine and /bin/sh; match the nodes' driver generation. The "
        "default, DCGM 4.5.2 (ubi9 build), is the one NVIDIA's GPU Operator v26.3 bundle pins for the 580 driver "
        "branch, pinned by digest through the image lock.",
    )
    efa_check_image: str | None = Field(
        default=None,
        description="Image with libfabric's fi_info (e.g. the nccl-tests image) for the EFA check on EFA pools. "
        "Unset: the acceptance ncclTestImage, else EFA pools get the GPU checks only.",
    )
    actor_image: str = Field(
        default="public.ecr.aws/docker/library/python:3.12-slim",
        min_length=1,
        description="Image with python3 (standard library only) that runs the agent: removes the taint, "
        "quarantines failed nodes, marks their instances unhealthy.",
    )
    replace_failed: bool = Field(
        default=True,
        description="Replace failed nodes: self-managed ASG instances are marked Unhealthy "
        "(autoscaling:SetInstanceHealth); managed node groups and Karpenter repair nodes whose "
        "AcceleratedHardwareReady condition is False (EKS node auto-repair, Karpenter NodeRepair).",
    )


class AcceptanceSpec(SpecModel):
    """Acceptance tests for new GPU nodes, run as Jobs by the platform stack."""

    enable_nccl_test: bool = Field(
        default=False,
        description="Run nccl-tests all_reduce_perf across two nodes of every EFA pool (MPIJob) and report "
        "bus bandwidth.",
    )
    nccl_test_image: str | None = Field(
        default=None,
        description="nccl-tests image built with EFA, libfabric and aws-ofi-nccl (required with the NCCL test).",
    )
    mpi_api_version: MpiApiVersion = Field(
        default="kubeflow.org/v2beta1",
        description="MPIJob API: kubeflow.org/v2beta1 (the MPI operator v2 the platform installs). "
        "kubeflow.org/v1 needs the Kubeflow training operator v1, which the platform does not install.",
    )
    min_bus_bandwidth_gbps: float | None = Field(
        default=None, gt=0, description="Fail the NCCL job when the average bus bandwidth is lower (GB/s)."
    )
    enable_dcgm_diag: bool = Field(
        default=False, description="Run `dcgmi diag -r 2` (about 2 minutes) on the nodes of every GPU pool."
    )
    dcgm_image: str = Field(
        default=DCGM_IMAGE,
        description="DCGM image for the diagnostic job (dcgmi, nv-hostengine and /bin/bash); match the nodes' "
        "driver generation. The default is nodeHealth.checkerImage's.",
    )


class CostAllocationSpec(SpecModel):
    """OpenCost: cost per namespace (team) from the catalog's dated prices, and a per-team GPU cost dashboard."""

    enabled: bool = Field(default=False, description="Install OpenCost and the per-team cost dashboard.")
    version: OpenCostVersion = Field(
        default=charts_lock.pinned_version("opencost"), description="opencost chart version."
    )
    gpu_price_share: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="Share of a GPU node's hourly price charged per GPU (split evenly over its GPUs); the rest "
        "is charged to CPU and memory requests. 1.0: the GPUs carry the whole node, as they are why it runs.",
    )
    ui: bool = Field(default=True, description="Run the OpenCost UI next to its API (port-forward to reach it).")


class AddonsSpec(SpecModel):
    """Everything the cluster runs so GPU nodes can be scheduled, watched, scaled and accepted."""

    namespace_prefix: str = Field(
        default="",
        pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?-)?$",
        description="Prefix for the add-on namespaces ('' keeps the upstream names, e.g. monitoring).",
    )
    gpu: GpuStackSpec = Field(default_factory=GpuStackSpec, description="NVIDIA device plugin or GPU Operator.")
    efa: EfaDevicePluginSpec = Field(default_factory=EfaDevicePluginSpec, description="EFA device plugin.")
    neuron: NeuronDevicePluginSpec = Field(
        default_factory=NeuronDevicePluginSpec, description="Neuron device plugin for Trainium/Inferentia pools."
    )
    observability: ObservabilitySpec = Field(
        default_factory=ObservabilitySpec, description="Metrics, dashboards, alerts and logs."
    )
    autoscaling: AutoscalingSpec = Field(default_factory=AutoscalingSpec, description="Node and workload scaling.")
    mpi_operator: MpiOperatorSpec = Field(
        default_factory=MpiOperatorSpec, description="Kubeflow MPI operator v2 (MPIJob kubeflow.org/v2beta1)."
    )
    acceptance: AcceptanceSpec = Field(default_factory=AcceptanceSpec, description="GPU node acceptance tests.")
    cost_allocation: CostAllocationSpec = Field(
        default_factory=CostAllocationSpec, description="OpenCost per-team cost allocation."
    )
    kueue: KueueSpec = Field(default_factory=KueueSpec, description="Kueue queueing and gang admission.")
    load_balancer_controller: LoadBalancerControllerSpec = Field(
        default_factory=LoadBalancerControllerSpec, description="AWS Load Balancer Controller (internal NLBs)."
    )
    node_health: NodeHealthSpec = Field(default_factory=NodeHealthSpec, description="GPU node health gate.")

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            # Compatibility: an explicit "off" asked for nothing, so it stays valid.
            data = {k: v for k, v in data.items() if not (k in _TRAINING_OPERATOR and v in ({"enabled": False}, {}))}
        training_operator_gone = (
            "removed: training-operator v1.8.1 has no Helm chart (v1 installs with "
            "kustomize), so the release could never install; MPIJobs now run on the MPI operator v2 "
            "(mpiOperator.enabled, MPIJob kubeflow.org/v2beta1). Delete this key"
        )
        reject_removed(data, dict.fromkeys(_TRAINING_OPERATOR, training_operator_gone))
        return data

    @property
    def mpi_operator_enabled(self) -> bool:
        """Whether the MPI operator is installed: explicit choice, else whenever the NCCL test (an MPIJob) runs."""
        if self.mpi_operator.enabled is not None:
            return self.mpi_operator.enabled
        return self.acceptance.enable_nccl_test

    @model_validator(mode="after")
    def _rules(self) -> AddonsSpec:
        rules = RuleViolations()
        gpu = self.gpu
        if gpu.mig is not None and gpu.use != "gpu-operator":
            rules.add(
                "gpu.mig", "MIG profiles are applied by the GPU Operator's MIG manager; set gpu.use: gpu-operator"
            )
        if gpu.mig is not None and gpu.time_slicing is not None:
            both = sorted(set(gpu.mig.pools) & set(gpu.time_slicing.pools))
            if both:
                rules.add("gpu.timeSlicing.pools", f"{both} are also MIG pools; a pool is either MIG or time-sliced")
        alerts = self.observability.alerts
        if alerts.sns_topic_arn is not None and alerts.emails:
            rules.add(
                "observability.alerts.emails",
                "alerts go to the existing snsTopicArn; subscribe the addresses to that topic and drop emails here",
            )
        if self.cost_allocation.enabled and self.observability.metrics != "kube-prometheus-stack":
            rules.add(
                "costAllocation.enabled",
                "OpenCost reads cAdvisor and kube-state-metrics series from the in-cluster Prometheus; set "
                "observability.metrics: kube-prometheus-stack or turn costAllocation off",
            )
        acc = self.acceptance
        if acc.enable_nccl_test and not acc.nccl_test_image:
            rules.add(
                "acceptance.ncclTestImage",
                "the NCCL test needs an nccl-tests image built with EFA and aws-ofi-nccl; give its pinned reference",
            )
        if acc.enable_nccl_test and acc.mpi_api_version == "kubeflow.org/v1":
            rules.add(
                "acceptance.mpiApiVersion",
                "kubeflow.org/v1 MPIJobs are served only by the Kubeflow training operator v1, which has no Helm "
                "chart and which the platform does not install (its mpijobs.kubeflow.org CRD also clashes with "
                "the MPI operator's); use kubeflow.org/v2beta1",
            )
        if acc.enable_nccl_test and not self.mpi_operator_enabled:
            rules.add(
                "mpiOperator.enabled",
                "the NCCL test is an MPIJob, which only the MPI operator runs; leave mpiOperator.enabled unset or "
                "set it true",
            )
        rules.raise_if_any()
        return self

    def resolved_autoscaler(self, pools: Iterable[NodePoolSpec]) -> Autoscaler:
        """The node autoscaler in effect: the explicit choice, or derived from the pools' backends."""
        if self.autoscaling.autoscaler is not None:
            return self.autoscaling.autoscaler
        if any(p.backend in ("managed", "self-managed") for p in pools):
            return "cluster-autoscaler"
        return "karpenter"

    def node_labels_for(self, pool: str) -> dict[str, str]:
        """Labels a pool's nodes need so the GPU sharing chosen here applies to them (merged by the pool builder)."""
        labels: dict[str, str] = {}
        if self.gpu.time_slicing is not None and pool in self.gpu.time_slicing.pools:
            labels[DEVICE_PLUGIN_CONFIG_LABEL] = TIME_SLICING_CONFIG_NAME
        if self.gpu.mig is not None and pool in self.gpu.mig.pools:
            labels[MIG_CONFIG_LABEL] = self.gpu.mig.profile
        return labels

    def pool_rules(self, pools: list[NodePoolSpec]) -> list[tuple[str, str]]:
        """Cross-section checks against the node pools; paths are relative to the platform spec."""
        problems: list[tuple[str, str]] = []
        names = {p.name for p in pools}
        sharing = [("timeSlicing", self.gpu.time_slicing), ("mig", self.gpu.mig)]
        for key, section in sharing:
            if section is None:
                continue
            unknown = [p for p in section.pools if p not in names]
            if unknown:
                problems.append((f"addons.gpu.{key}.pools", f"{unknown} are not node pools; pools are {sorted(names)}"))
        if self.gpu.mig is not None:
            by_name = {p.name: p for p in pools}
            for pool_name in self.gpu.mig.pools:
                pool = by_name.get(pool_name)
                if pool is None:
                    continue
                # Which GPUs partition with MIG is catalog data (accelerators.json `mig`), not a list kept here.
                no_mig = [s.instance_type for s in pool.specs if not _mig_capable(s.accelerator)]
                if no_mig:
                    problems.append(
                        (
                            "addons.gpu.mig.pools",
                            f"pool '{pool_name}' has GPUs without MIG ({no_mig}); use A100/H100/H200/B200 types "
                            "or time-slicing",
                        )
                    )
        chosen = self.autoscaling.autoscaler
        if chosen == "karpenter":
            stuck = [p.name for p in pools if p.backend != "karpenter"]
            if stuck:
                problems.append(
                    (
                        "addons.autoscaling.autoscaler",
                        f"pools {stuck} are managed/self-managed and Karpenter does not scale them; use "
                        "cluster-autoscaler or leave autoscaler unset",
                    )
                )
        return problems
