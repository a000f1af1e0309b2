"""GPU workload templates a team stack instantiates: distributed training, inference, and node acceptance jobs.

Every template derives its GPU, EFA and NCCL settings from the catalog entry of the pool's instance type, so a
job asks for exactly the devices a node has and gets the libfabric/NCCL environment that type needs.
Kubernetes objects are written in the API's own camelCase so they read like the manifests they become.
"""

from __future__ import annotations

import shlex
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, model_validator

from components.addons import EFA_RESOURCE, GPU_TOLERATION
from components.base import ComponentConfig, child
from gpucloud import catalog
from gpucloud.spec.common import Name

POOL_LABEL_KEY = "gpucloud.io/pool"
JOB_LABEL_KEY = "gpucloud.io/workload"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
PREEMPT_FILE = "/tmp/gpucloud-preempt"
RDZV_PORT = 29500
# The only non-loopback interface of a pod on the Amazon VPC CNI (pods get a veth named eth0 in their netns).
POD_SOCKET_IFNAME = "eth0"
# The spot interruption notice comes two minutes ahead; the drain that follows leaves a bit less than that.
SPOT_NOTICE_SECONDS = 120


class GpuWorkloadConfig(ComponentConfig):
    """Where a GPU workload runs and how it reaches the GPUs; the base of every template's config."""

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
    karpenter: bool = Field(
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
    if catalog.family_of(instance_type).startswith(("g5", "g6")):
        # No NVLink/P2P on these: staging through host memory with cudaMemcpy is faster than SHM copies.
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


def _device_resources(config: GpuWorkloadConfig, gpus: int, hugepages: str | None, memory: str) -> dict[str, Any]:
    res: dict[str, str] = {"nvidia.com/gpu": str(gpus), "memory": memory}
    if config.use_efa:
        res[EFA_RESOURCE] = str(config.spec.efa_interfaces)
        if hugepages:
            res["hugepages-2Mi"] = hugepages
    # Extended resources and hugepages must have requests equal to limits.
    return {"requests": dict(res), "limits": dict(res)}


def _pod_metadata(config: GpuWorkloadConfig, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": labels}
    if config.karpenter:
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


# -- distributed training ----------------------------------------------------------------------------------


def training_pdb_policy(nodes: int) -> dict[str, Any]:
    """PDB spec of a training gang: admits the eviction of one rank at a time.

    The interruption handlers (aws-node-termination-handler, Karpenter) drain through the Eviction API, which
    honours PDBs; eviction is what runs the preStop hook and SIGTERM that write the emergency checkpoint. The
    old `minAvailable: nodes` allowed zero disruptions, so every drain was refused until the instance died under
    the job with no checkpoint. One rank at a time is enough: each node holds one rank and the ranks agree to
    stop together (examples/train_ddp.py), so the first evicted rank checkpoints the whole gang. It must be an
    integer `minAvailable`: a Job has no scale subresource, and for such pods the disruption controller supports
    neither `maxUnavailable` nor a percentage (it then allows no eviction at all; Kubernetes "Specifying a
    Disruption Budget for your Application", arbitrary controllers). `AlwaysAllow` (policy/v1, GA in 1.31) lets a
    drain evict a rank that is not Ready instead of waiting for it. Voluntary disruption is kept off by other
    means: WhenEmpty consolidation and do-not-disrupt on Karpenter pools, fully requested GPUs for
    cluster-autoscaler's utilisation-based scale-down.
    """
    return {"minAvailable": nodes - 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}


class TrainingJobConfig(GpuWorkloadConfig):
    """Inputs of TrainingJob."""

    nodes: int = Field(ge=1, le=1000, description="Nodes (pods); each runs torchrun over all its GPUs.")
    script: str = Field(min_length=1, description="Training script torchrun starts, e.g. /workspace/train_ddp.py.")
    script_args: list[str] = Field(default_factory=list, description="Arguments after the script.")
    claim_name: str = Field(
        min_length=1, description="PersistentVolumeClaim of the Lustre file system (data and checkpoints)."
    )
    mount_path: str = Field(default="/fsx", description="Where the Lustre volume is mounted.")
    checkpoint_dir: str | None = Field(
        default=None, description="Checkpoint directory; defaults to <mountPath>/checkpoints/<jobName>."
    )
    use_pytorch_job: bool = Field(
        default=False, description="Render a Kubeflow PyTorchJob (training operator) instead of an indexed Job."
    )
    termination_grace_period_seconds: int = Field(
        default=110,
        ge=30,
        le=3600,
        description="Time to write an emergency checkpoint after the preStop/SIGTERM; keep below 120 on spot.",
    )
    max_restarts: int = Field(default=3, ge=0, le=100, description="torchrun restarts and Job retries per node.")
    hugepages_2mi: str = Field(default="5120Mi", description="2 MiB huge pages per pod for EFA (libfabric).")
    memory: str | None = Field(default=None, description="Memory request/limit; default 80% of the node's memory.")
    shm_size_gib: int | None = Field(default=None, ge=1, description="/dev/shm size; default 1/4 of node memory.")

    @property
    def resolved_checkpoint_dir(self) -> str:
        return self.checkpoint_dir or f"{self.mount_path.rstrip('/')}/checkpoints/{self.job_name}"


class TrainingJob(pulumi.ComponentResource):
    """Multi-node torchrun training: indexed Job + headless Service (or PyTorchJob), PDB, checkpoint-on-preempt."""

    def __init__(
        self,
        name: str,
        config: TrainingJobConfig,
        k8s_provider: pulumi.ProviderResource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:workloads:TrainingJob", name, None, opts)
        spec = config.spec
        gpus = spec.accelerator_count
        job = config.job_name
        labels = {"app.kubernetes.io/name": job, JOB_LABEL_KEY: job}
        memory = config.memory or f"{int(spec.memory_gib * 0.8)}Gi"
        shm = config.shm_size_gib or max(1, int(spec.memory_gib / 4))
        ckpt = config.resolved_checkpoint_dir
        self.headless_service: k8s.core.v1.Service | None = None
        self.job: k8s.batch.v1.Job | None = None
        self.pytorch_job: k8s.apiextensions.CustomResource | None = None
        self.master_addr = ""

        if config.use_pytorch_job:
            # The operator injects MASTER_ADDR/MASTER_PORT/RANK and creates the Service.
            rendezvous = [
                f"--nnodes={config.nodes}",
                f"--nproc-per-node={gpus}",
                "--node-rank=$(RANK)",
                "--master-addr=$(MASTER_ADDR)",
                "--master-port=$(MASTER_PORT)",
            ]
        else:
            service = f"{job}-workers"
            self.master_addr = f"{job}-0.{service}.{config.namespace}.svc.cluster.local"
            # c10d rendezvous lets a replaced pod (spot reclaim) rejoin and every worker restart from the
            # latest checkpoint, up to max-restarts.
            rendezvous = [
                f"--nnodes={config.nodes}",
                f"--nproc-per-node={gpus}",
                "--rdzv-backend=c10d",
                f"--rdzv-endpoint={self.master_addr}:{RDZV_PORT}",
                f"--rdzv-id={job}",
                f"--max-restarts={config.max_restarts}",
            ]
        command = ["torchrun", *rendezvous, config.script, *config.script_args]
        env = {
            **nccl_env(config.instance_type, config.use_efa),
            "CHECKPOINT_DIR": ckpt,
            "GPUCLOUD_PREEMPT_FILE": PREEMPT_FILE,
            "PYTHONUNBUFFERED": "1",
            **config.env,
        }
        # preStop runs before SIGTERM: flag the script, then wait (within the grace period) until it reports
        # the emergency checkpoint written.
        wait = max(1, config.termination_grace_period_seconds - 10)
        pre_stop = (
            f"touch {PREEMPT_FILE}; i=0; while [ ! -f {PREEMPT_FILE}.done ] && [ $i -lt {wait} ]; "
            "do sleep 1; i=$((i+1)); done"
        )
        container = {
            "name": "pytorch" if config.use_pytorch_job else "trainer",
            "image": config.image,
            "command": command,
            "env": _env_list(env),
            "ports": [{"name": "rdzv", "containerPort": RDZV_PORT}],
            "resources": _device_resources(config, gpus, config.hugepages_2mi, memory),
            "volumeMounts": [
                {"name": "dshm", "mountPath": "/dev/shm"},
                {"name": "fsx", "mountPath": config.mount_path},
            ],
            "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", pre_stop]}}},
        }
        pod_spec: dict[str, Any] = {
            "restartPolicy": "OnFailure" if config.use_pytorch_job else "Never",
            "terminationGracePeriodSeconds": config.termination_grace_period_seconds,
            "tolerations": [GPU_TOLERATION],
            "affinity": _node_affinity(config),
            "containers": [container],
            "volumes": [
                _shm_volume(shm),
                {"name": "fsx", "persistentVolumeClaim": {"claimName": config.claim_name}},
            ],
        }
        template = {"metadata": _pod_metadata(config, labels), "spec": pod_spec}
        provider = k8s_provider

        if config.use_pytorch_job:
            replica_specs: dict[str, Any] = {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": template}
            }
            if config.nodes > 1:
                replica_specs["Worker"] = {
                    "replicas": config.nodes - 1,
                    "restartPolicy": "OnFailure",
                    "template": template,
                }
            self.pytorch_job = k8s.apiextensions.CustomResource(
                f"{name}-pytorchjob",
                api_version="kubeflow.org/v1",
                kind="PyTorchJob",
                metadata={"name": job, "namespace": config.namespace, "labels": labels},
                spec={
                    "runPolicy": {"cleanPodPolicy": "None", "backoffLimit": config.max_restarts * config.nodes},
                    "nprocPerNode": str(gpus),
                    "pytorchReplicaSpecs": replica_specs,
                },
                opts=child(self, provider=provider),
            )
        else:
            self.headless_service = k8s.core.v1.Service(
                f"{name}-workers",
                metadata={"name": f"{job}-workers", "namespace": config.namespace, "labels": labels},
                spec={
                    "clusterIP": "None",
                    # Workers must resolve each other before they pass readiness (there is no probe).
                    "publishNotReadyAddresses": True,
                    "selector": labels,
                    "ports": [{"name": "rdzv", "port": RDZV_PORT, "targetPort": RDZV_PORT}],
                },
                opts=child(self, provider=provider),
            )
            pod_spec["subdomain"] = f"{job}-workers"
            self.job = k8s.batch.v1.Job(
                f"{name}-job",
                metadata={"name": job, "namespace": config.namespace, "labels": labels},
                spec={
                    "completionMode": "Indexed",
                    "completions": config.nodes,
                    "parallelism": config.nodes,
                    "backoffLimit": config.max_restarts * config.nodes,
                    # A pod evicted by a drain or spot reclaim is not the job's fault: do not count it.
                    "podFailurePolicy": {
                        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
                    },
                    "template": template,
                },
                opts=child(self, provider=provider, depends_on=[self.headless_service]),
            )
        self.pdb = _pdb(self, name, config.namespace, labels, provider, **training_pdb_policy(config.nodes))
        self.checkpoint_dir = ckpt
        self.register_outputs(
            {
                "job_name": job,
                "checkpoint_dir": ckpt,
                "master_addr": self.master_addr,
                "kind": "PyTorchJob" if config.use_pytorch_job else "Job",
            }
        )


# -- inference --------------------------------------------------------------------------------------------


class InferenceDeploymentConfig(GpuWorkloadConfig):
    """Inputs of InferenceDeployment."""

    replicas: int = Field(default=2, ge=1, description="Replicas at creation (the autoscaler owns it afterwards).")
    min_replicas: int = Field(default=2, ge=1, description="Fewest replicas the autoscaler keeps.")
    max_replicas: int = Field(default=8, ge=1, description="Most replicas the autoscaler adds.")
    gpus_per_replica: int = Field(default=1, ge=1, description="GPUs per replica.")
    gpu_resource: str = Field(
        default="nvidia.com/gpu",
        pattern=r"^nvidia\.com/(gpu|mig-[0-9a-z.]+)$",
        description="Resource requested: nvidia.com/gpu, or nvidia.com/mig-<profile> on mixed-strategy MIG pools.",
    )
    command: list[str] | None = Field(default=None, description="Container command (image default when unset).")
    args: list[str] | None = Field(default=None, description="Container args.")
    port: int = Field(default=8000, ge=1, le=65535, description="Serving port (Service port too).")
    health_path: str = Field(default="/health", description="HTTP readiness/liveness path.")
    memory: str = Field(default="32Gi", description="Memory request and limit per replica.")
    cpu: str = Field(default="4", description="CPU request per replica.")
    use_keda: bool = Field(
        default=True,
        description="Scale with a KEDA ScaledObject on DCGM GPU utilisation; false renders an HPA on the "
        "DCGM_FI_DEV_GPU_UTIL pods metric (needs a custom-metrics adapter such as prometheus-adapter).",
    )
    prometheus_server_url: str | pulumi.Output | None = Field(
        default=None,
        description="Prometheus (or AMP) query endpoint KEDA reads (a string or a StackReference output); "
        "required with use_keda.",
    )
    keda_trigger_authentication: str | None = Field(
        default=None, description="ClusterTriggerAuthentication for AMP (SigV4); unset for in-cluster Prometheus."
    )
    gpu_utilization_target_percent: float = Field(
        default=80, gt=0, le=100, description="Add replicas when average GPU utilisation exceeds this."
    )
    spread_when_unsatisfiable: Literal["ScheduleAnyway", "DoNotSchedule"] = Field(
        default="ScheduleAnyway",
        description="Zone spread: ScheduleAnyway prefers spreading (GPU capacity is scarce), DoNotSchedule "
        "insists on it.",
    )

    @model_validator(mode="after")
    def _scaling(self) -> InferenceDeploymentConfig:
        problems = []
        if not self.min_replicas <= self.replicas <= self.max_replicas:
            problems.append("replicas: need min_replicas <= replicas <= max_replicas")
        if self.gpus_per_replica > self.spec.accelerator_count and self.gpu_resource == "nvidia.com/gpu":
            problems.append(
                f"gpus_per_replica: {self.instance_type} has {self.spec.accelerator_count} GPUs, "
                f"fewer than {self.gpus_per_replica}"
            )
        if self.use_keda and self.prometheus_server_url is None:
            problems.append("prometheus_server_url: KEDA needs the Prometheus/AMP endpoint (GpuAddons output)")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class InferenceDeployment(pulumi.ComponentResource):
    """GPU inference: Deployment spread over AZs, Service, PDB, and KEDA (or HPA) on GPU utilisation."""

    def __init__(
        self,
        name: str,
        config: InferenceDeploymentConfig,
        k8s_provider: pulumi.ProviderResource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:workloads:InferenceDeployment", name, None, opts)
        app = config.job_name
        labels = {"app.kubernetes.io/name": app, JOB_LABEL_KEY: app}
        provider = k8s_provider
        res: dict[str, str] = {config.gpu_resource: str(config.gpus_per_replica), "memory": config.memory}
        container: dict[str, Any] = {
            "name": "server",
            "image": config.image,
            "env": _env_list({**nccl_env(config.instance_type, config.use_efa), **config.env}),
            "ports": [{"name": "http", "containerPort": config.port}],
            "resources": {"requests": {**res, "cpu": config.cpu}, "limits": dict(res)},
            "readinessProbe": {
                "httpGet": {"path": config.health_path, "port": "http"},
                "periodSeconds": 10,
                "failureThreshold": 3,
            },
            # Model loading takes minutes; the startup probe keeps liveness from killing a loading server.
            "startupProbe": {
                "httpGet": {"path": config.health_path, "port": "http"},
                "periodSeconds": 10,
                "failureThreshold": 90,
            },
            "livenessProbe": {"httpGet": {"path": config.health_path, "port": "http"}, "periodSeconds": 20},
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
        }
        if config.command:
            container["command"] = config.command
        if config.args:
            container["args"] = config.args
        if config.use_efa:
            container["resources"]["requests"][EFA_RESOURCE] = str(config.spec.efa_interfaces)
            container["resources"]["limits"][EFA_RESOURCE] = str(config.spec.efa_interfaces)
        pod_spec = {
            "tolerations": [GPU_TOLERATION],
            "affinity": _node_affinity(config),
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": config.spread_when_unsatisfiable,
                    "labelSelector": {"matchLabels": labels},
                },
                {
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": labels},
                },
            ],
            "terminationGracePeriodSeconds": 60,
            "containers": [container],
            "volumes": [_shm_volume(8)],
        }
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata={"name": app, "namespace": config.namespace, "labels": labels},
            spec={
                "replicas": config.replicas,
                "selector": {"matchLabels": labels},
                # Never drop below the serving replicas during a rollout: start the new one first.
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
                "template": {"metadata": {"labels": labels}, "spec": pod_spec},
            },
            # The autoscaler owns replicas after creation.
            opts=child(self, provider=provider, ignore_changes=["spec.replicas"]),
        )
        self.service = k8s.core.v1.Service(
            f"{name}-service",
            metadata={"name": app, "namespace": config.namespace, "labels": labels},
            spec={"selector": labels, "ports": [{"name": "http", "port": config.port, "targetPort": "http"}]},
            opts=child(self, provider=provider),
        )
        self.pdb = _pdb(self, name, config.namespace, labels, provider, maxUnavailable=1)
        target = f"{config.gpu_utilization_target_percent:g}"
        self.scaled_object: k8s.apiextensions.CustomResource | None = None
        self.hpa: k8s.autoscaling.v2.HorizontalPodAutoscaler | None = None
        if config.use_keda:
            query = f'avg(DCGM_FI_DEV_GPU_UTIL{{namespace="{config.namespace}", pod=~"{app}-.*"}})'
            metadata: dict[str, Any] = {
                "serverAddress": config.prometheus_server_url,
                "query": query,
                "threshold": target,
                "ignoreNullValues": "true",
            }
            trigger: dict[str, Any] = {"type": "prometheus", "metricType": "Value", "metadata": metadata}
            if config.keda_trigger_authentication:
                metadata["awsRegion"] = config.region
                trigger["authenticationRef"] = {
                    "name": config.keda_trigger_authentication,
                    "kind": "ClusterTriggerAuthentication",
                }
            self.scaled_object = k8s.apiextensions.CustomResource(
                f"{name}-scaledobject",
                api_version="keda.sh/v1alpha1",
                kind="ScaledObject",
                metadata={"name": app, "namespace": config.namespace, "labels": labels},
                spec={
                    "scaleTargetRef": {"name": app},
                    "minReplicaCount": config.min_replicas,
                    "maxReplicaCount": config.max_replicas,
                    "pollingInterval": 30,
                    "cooldownPeriod": 300,
                    # Scale down slowly: a GPU replica takes minutes to come back (node + model load).
                    "advanced": {
                        "horizontalPodAutoscalerConfig": {
                            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}}
                        }
                    },
                    "triggers": [trigger],
                },
                opts=child(self, provider=provider, depends_on=[self.deployment]),
            )
        else:
            self.hpa = k8s.autoscaling.v2.HorizontalPodAutoscaler(
                f"{name}-hpa",
                metadata={"name": app, "namespace": config.namespace, "labels": labels},
                spec={
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": app},
                    "minReplicas": config.min_replicas,
                    "maxReplicas": config.max_replicas,
                    "metrics": [
                        {
                            "type": "Pods",
                            "pods": {
                                "metric": {"name": "DCGM_FI_DEV_GPU_UTIL"},
                                "target": {"type": "AverageValue", "averageValue": target},
                            },
                        }
                    ],
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}},
                },
                opts=child(self, provider=provider, depends_on=[self.deployment]),
            )
        self.register_outputs(
            {"deployment_name": app, "service_name": app, "autoscaling": "keda" if config.use_keda else "hpa"}
        )


# -- acceptance tests --------------------------------------------------------------------------------------


class NcclTestConfig(GpuWorkloadConfig):
    """Inputs of NcclTest."""

    nodes: int = Field(default=2, ge=2, le=1000, description="Worker nodes (all_reduce_perf runs one rank per GPU).")
    mpi_api_version: Literal["kubeflow.org/v2beta1", "kubeflow.org/v1"] = Field(
        default="kubeflow.org/v2beta1",
        description="MPIJob API: v2beta1 (MPI operator v2) or v1 (Kubeflow training operator).",
    )
    all_reduce_perf: str = Field(
        default="/opt/nccl-tests/build/all_reduce_perf", description="Path of all_reduce_perf in the image."
    )
    max_bytes: str = Field(default="16G", pattern=r"^\d+[KMG]?$", description="Largest message size (from 8 bytes).")
    iterations: int = Field(default=100, ge=1, le=10000, description="Iterations per message size.")
    min_bus_bandwidth_gbps: float | None = Field(
        default=None, gt=0, description="Fail the job when the average bus bandwidth (GB/s) is lower."
    )


class NcclTest(pulumi.ComponentResource):
    """nccl-tests all_reduce_perf across a pool's nodes over EFA, as an MPIJob that reports bus bandwidth."""

    def __init__(
        self,
        name: str,
        config: NcclTestConfig,
        k8s_provider: pulumi.ProviderResource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:workloads:NcclTest", name, None, opts)
        spec = config.spec
        gpus = spec.accelerator_count
        job = config.job_name
        labels = {"app.kubernetes.io/name": job, JOB_LABEL_KEY: job}
        env = {**nccl_env(config.instance_type, config.use_efa), **config.env}
        exports = " ".join(f"-x {k}" for k in env)
        mpirun = (
            f"mpirun --allow-run-as-root --tag-output -np {config.nodes * gpus} --map-by ppr:{gpus}:node "
            f"--bind-to none -x PATH -x LD_LIBRARY_PATH {exports} "
            f"{shlex.quote(config.all_reduce_perf)} -b 8 -e {config.max_bytes} -f 2 -g 1 -c 1 -n {config.iterations}"
        )
        check = (
            f'awk -v b="$busbw" -v m={config.min_bus_bandwidth_gbps:g} '
            '\'BEGIN { if (b + 0 < m) { print "gpucloud: below the expected " m " GB/s"; exit 1 } }\''
            if config.min_bus_bandwidth_gbps
            else "true"
        )
        script = "\n".join(
            [
                "set -o pipefail",
                f"{mpirun} | tee /tmp/nccl.log",
                "busbw=$(awk '/Avg bus bandwidth/ {print $NF}' /tmp/nccl.log)",
                'echo "gpucloud: nccl all_reduce average bus bandwidth ${busbw} GB/s"',
                check,
            ]
        )
        memory = f"{int(spec.memory_gib * 0.5)}Gi"
        worker = {
            "name": "worker",
            "image": config.image,
            "env": _env_list(env),
            "resources": _device_resources(config, gpus, "5120Mi", memory),
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
        }
        launcher = {
            "name": "launcher",
            "image": config.image,
            "command": ["/bin/bash", "-c", script],
            "env": _env_list(env),
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
        }
        replica_specs = {
            "Launcher": {
                "replicas": 1,
                "restartPolicy": "OnFailure",
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [launcher]}},
            },
            "Worker": {
                "replicas": config.nodes,
                "template": {
                    "metadata": _pod_metadata(config, labels),
                    "spec": {
                        "tolerations": [GPU_TOLERATION],
                        "affinity": _node_affinity(config),
                        "containers": [worker],
                        "volumes": [_shm_volume(max(1, int(spec.memory_gib / 8)))],
                    },
                },
            },
        }
        mpi_spec: dict[str, Any] = {
            "slotsPerWorker": gpus,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 2, "ttlSecondsAfterFinished": 86400},
            "mpiReplicaSpecs": replica_specs,
        }
        if config.mpi_api_version == "kubeflow.org/v2beta1":
            mpi_spec["mpiImplementation"] = "OpenMPI"
        self.mpi_job = k8s.apiextensions.CustomResource(
            f"{name}-mpijob",
            api_version=config.mpi_api_version,
            kind="MPIJob",
            metadata={"name": job, "namespace": config.namespace, "labels": labels},
            spec=mpi_spec,
            opts=child(self, provider=k8s_provider),
        )
        self.register_outputs({"job_name": job, "ranks": config.nodes * gpus})


class DcgmDiagConfig(GpuWorkloadConfig):
    """Inputs of DcgmDiag."""

    nodes: int = Field(default=1, ge=1, le=1000, description="Nodes to test (one pod per node, all its GPUs).")
    level: Literal[1, 2, 3, 4] = Field(
        default=2, description="dcgmi diag run level: 1 seconds, 2 about 2 minutes, 3 about 15 minutes, 4 extended."
    )


class DcgmDiag(pulumi.ComponentResource):
    """`dcgmi diag -r <level>` on every node of a pool, one pod per node holding all its GPUs."""

    def __init__(
        self,
        name: str,
        config: DcgmDiagConfig,
        k8s_provider: pulumi.ProviderResource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:workloads:DcgmDiag", name, None, opts)
        spec = config.spec
        job = config.job_name
        labels = {"app.kubernetes.io/name": job, JOB_LABEL_KEY: job}
        script = f"nv-hostengine && sleep 2 && dcgmi diag -r {config.level}"
        affinity = _node_affinity(config)
        # One pod per node, so every node of the pool is tested and no two pods share GPUs.
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
        deadline = {1: 600, 2: 1200, 3: 3600, 4: 14400}[config.level]
        self.job = k8s.batch.v1.Job(
            f"{name}-job",
            metadata={"name": job, "namespace": config.namespace, "labels": labels},
            spec={
                "completionMode": "Indexed",
                "completions": config.nodes,
                "parallelism": config.nodes,
                "backoffLimit": 0,
                "activeDeadlineSeconds": deadline,
                "ttlSecondsAfterFinished": 86400,
                "template": {
                    "metadata": _pod_metadata(config, labels),
                    "spec": {
                        "restartPolicy": "Never",
                        "tolerations": [GPU_TOLERATION],
                        "affinity": affinity,
                        "containers": [
                            {
                                "name": "dcgm-diag",
                                "image": config.image,
                                "command": ["/bin/bash", "-c", script],
                                "env": _env_list(config.env),
                                "resources": {
                                    "requests": {"nvidia.com/gpu": str(spec.accelerator_count)},
                                    "limits": {"nvidia.com/gpu": str(spec.accelerator_count)},
                                },
                                # The PCIe and memory tests read device registers.
                                "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}},
                            }
                        ],
                    },
                },
            },
            opts=child(self, provider=k8s_provider),
        )
        self.register_outputs({"job_name": job, "level": config.level})
