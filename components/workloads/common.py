"""What every GPU workload template shares: the base config, NCCL/EFA environment, affinity, PDBs."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, model_validator

from gpucloud import catalog
from gpucloud.components.addons.common import EFA_RESOURCE
from gpucloud.components.base import ComponentConfig, child
from gpucloud.fleet import labels as L
from gpucloud.spec.common import Name

POOL_LABEL_KEY = L.POOL
JOB_LABEL_KEY = L.WORKLOAD
DO_NOT_DISRUPT = L.DO_NOT_DISRUPT
PREEMPT_FILE = "/tmp/gpucloud-preempt"
RDZV_PORT = 29500
# The only non-loopback interface of a pod on the Amazon VPC CNI (pods get a veth named eth0 in their netns).
POD_SOCKET_IFNAME = "eth0"
# The spot interruption notice comes two minutes ahead; the drain that follows leaves a bit less than that.
SPOT_NOTICE_SECONDS = 120
# A drained GPU pod's grace when its pool declares no checkpoint model, or the platform stack predates the
# poolDrainGraceSeconds export: what TrainingJob always used (the emergency write inside spot's notice).
DEFAULT_DRAIN_GRACE_SECONDS = 110
# The platform export mapping each pool with a checkpoint model to its drain grace (components/platform.py);
# team stacks read it through their StackReference.
DRAIN_GRACE_EXPORT = "poolDrainGraceSeconds"
# The longest drain grace a checkpoint model gives: writeSeconds at most 3600 plus the 30 s margin
# (gpucloud/spec/pools.py CheckpointSpec, DRAIN_MARGIN_SECONDS).
MAX_DRAIN_GRACE_SECONDS = 3630

# A grace period in seconds, or an Output of one (a StackReference read resolves only at deployment).
GraceSeconds = Annotated[int, Field(ge=1, le=MAX_DRAIN_GRACE_SECONDS)] | pulumi.Output


class GpuWorkloadConfig(ComponentConfig):
    """Where a GPU workload runs and how it reaches the GPUs; the base of every template's config."""

    RENAMED: ClassVar[dict[str, str]] = {"karpenter": "use_karpenter"}

    namespace: Name = Field(description="Kubernetes namespace of the workload (must exist).")
    job_name: Name = Field(description="Name of the Kubernetes objects (a DNS label, at most 40 characters).")
    pool: Name = Field(description="Node pool the workload runs on (matched through the pool label).")
    pool_label_key: str = Field(
        default=POOL_LABEL_KEY, description="Node label carrying the pool name (set by the node pool components)."
    )
    instance_type: str = Field(description="The pool's instance type; GPU and EFA counts come from the catalog.")
    availability_zones: list[str] | None = Field(
        default=None, description="AZs the pods may run in; EFA jobs take exactly the pool's one AZ."
    )
    image: str = Field(min_length=1, description="Container image (pin a tag or digest).")
    use_efa: bool = Field(default=False, description="Request the node's EFA interfaces and set the EFA NCCL env.")
    use_karpenter: bool = Field(
        default=False, description="The pool is Karpenter-managed: annotate pods karpenter.sh/do-not-disrupt."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables for the container.")

    @property
    def spec(self) -> catalog.InstanceSpec:
        return catalog.get_catalog().get(self.instance_type)

    @model_validator(mode="after")
    def _placement(self) -> GpuWorkloadConfig:
        problems = []
        try:
            spec = catalog.get_catalog().get(self.instance_type)
        except (catalog.UnknownInstanceType, catalog.NotInCatalog) as exc:
            raise ValueError(f"instance_type: {exc}") from None
        if not (spec.is_gpu and spec.manufacturer == "nvidia"):
            problems.append(f"instance_type: {self.instance_type} has no NVIDIA GPU ({spec.accelerator})")
        if self.use_efa and not spec.efa_supported:
            problems.append(f"use_efa: {self.instance_type} has no EFA; set use_efa false or pick an EFA type")
        if self.use_efa and (self.availability_zones is None or len(self.availability_zones) != 1):
            problems.append("availability_zones: an EFA workload runs in exactly one AZ (the pool's); give it")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class DrainedWorkloadConfig(GpuWorkloadConfig):
    """A GPU job whose pods a node drain stops: their grace comes from the pool's checkpoint model."""

    termination_grace_period_seconds: GraceSeconds | None = Field(
        default=None,
        description="Seconds between SIGTERM and SIGKILL of a drained pod: the pool's drain grace "
        "(rollout.checkpoint, the platform's poolDrainGraceSeconds). Unset: the Kubernetes default (30 s).",
    )


def _grace(config: DrainedWorkloadConfig) -> dict[str, Any]:
    """The pod spec's terminationGracePeriodSeconds, when the config sets one.

    An acceptance pod writes no checkpoint and exits on SIGTERM; the pool's grace is only its ceiling, so a drain
    sized for the pool (NTH's hook, Karpenter's node grace) holds for every pod on the node.
    """
    grace = config.termination_grace_period_seconds
    return {} if grace is None else {"terminationGracePeriodSeconds": grace}


def pool_drain_grace(exported: Any, pool: str, default: int = DEFAULT_DRAIN_GRACE_SECONDS) -> pulumi.Output[int]:
    """The drain grace of `pool` from the platform's poolDrainGraceSeconds export (a StackReference output).

    `default` when the pool declares no checkpoint model (it is then not in the map) or the platform is older
    than the export (the output resolves to None). A malformed value also gives `default`, with a warning naming
    the output: the job still deploys, with the grace it had before the export existed.
    """

    def pick(graces: Any) -> int:
        if graces is None:
            return default
        value = graces.get(pool) if isinstance(graces, dict) else graces
        if value is None:
            return default
        # Numbers cross a StackReference as floats (protobuf Struct): 120.0 is 120 s.
        whole = isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()
        if not whole or not 1 <= value <= MAX_DRAIN_GRACE_SECONDS:
            pulumi.log.warn(
                f"platform output {DRAIN_GRACE_EXPORT}: expected {{pool: seconds 1-{MAX_DRAIN_GRACE_SECONDS}}}, "
                f"got {value!r} for {pool}; its pods keep {default} s (re-run the platform stack to refresh it)"
            )
            return default
        return int(value)

    return pulumi.Output.from_input(exported).apply(pick)


def nccl_env(instance_type: str, use_efa: bool) -> dict[str, str]:
    """NCCL / libfabric environment for an instance type (awsome-distributed-training EFA cheatsheet).

    Deliberately absent: FI_EFA_USE_DEVICE_RDMA (wrong with libfabric >= 1.18 / aws-ofi-nccl >= 1.7),
    FI_PROVIDER and NCCL_PROTO (only for aws-ofi-nccl <= 1.5), NCCL_BUFFSIZE/NCCL_MIN_CHANNELS and RDMAV_*.
    """
    # NCCL_SOCKET_IFNAME is a prefix match on interface names (NCCL environment variable docs). A pod on the
    # VPC CNI has `lo` and `eth0` only; the host's `ens5`/`enp*` names never appear inside the pod, so the old
    # "en" matched nothing and NCCL's bootstrap failed with "no socket interface found".
    env = {"NCCL_SOCKET_IFNAME": POD_SOCKET_IFNAME, "NCCL_DEBUG": "WARN"}
    if use_efa:
        # Huge pages for libfabric buffers break fork() (ENOMEM) in data loader workers.
        env["FI_EFA_USE_HUGE_PAGE"] = "0"
    spec = catalog.get_catalog().find(instance_type)
    if spec is not None and spec.manufacturer == "nvidia" and spec.interconnect == "PCIe":
        # GPUs on PCIe only (no NVLink, the catalog's interconnect): staging through host memory with cudaMemcpy
        # is faster than SHM copies.
        env["NCCL_SHM_USE_CUDA_MEMCPY"] = "1"
    return env


def _env_list(env: dict[str, str]) -> list[dict[str, Any]]:
    return [{"name": k, "value": v} for k, v in env.items()]


def _node_affinity(config: GpuWorkloadConfig) -> dict[str, Any]:
    expressions = [
        {"key": config.pool_label_key, "operator": "In", "values": [config.pool]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [config.instance_type]},
    ]
    if config.availability_zones:
        expressions.append(
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(config.availability_zones)}
        )
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    }


def node_cpu_share(config: GpuWorkloadConfig, share: float) -> str:
    """A whole-CPU share of the node's vCPUs (at least one): the CPU a device pod requests beside its GPUs, so the
    scheduler and the kubelet's eviction order see the host CPU the job's data loaders and proxies need."""
    return str(max(1, int(config.spec.vcpu * share)))


def _device_resources(
    config: GpuWorkloadConfig, gpus: int, hugepages: str | None, memory: str, cpu: str
) -> dict[str, Any]:
    res: dict[str, str] = {"nvidia.com/gpu": str(gpus), "cpu": cpu, "memory": memory}
    if config.use_efa:
        res[EFA_RESOURCE] = str(config.spec.efa_interfaces)
        if hugepages:
            res["hugepages-2Mi"] = hugepages
    # Extended resources and hugepages must have requests equal to limits.
    return {"requests": dict(res), "limits": dict(res)}


def _pod_metadata(config: GpuWorkloadConfig, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": labels}
    if config.use_karpenter:
        # Karpenter would otherwise consolidate a node out from under a running job.
        meta["annotations"] = {DO_NOT_DISRUPT: "true"}
    return meta


def _shm_volume(size_gib: int) -> dict[str, Any]:
    # NCCL and data loader workers exchange through /dev/shm; the container default of 64 MiB is far too small.
    return {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{size_gib}Gi"}}


def _pdb(
    parent: pulumi.Resource, name: str, namespace: str, labels: dict[str, str], provider: Any, **policy: Any
) -> k8s.policy.v1.PodDisruptionBudget:
    return k8s.policy.v1.PodDisruptionBudget(
        f"{name}-pdb",
        metadata={"name": name, "namespace": namespace, "labels": labels},
        spec={"selector": {"matchLabels": labels}, **policy},
        opts=child(parent, provider=provider),
    )
