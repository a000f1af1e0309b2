"""TrainingJob: a multi-node distributed training gang (Indexed Job, rendezvous, PDB, checkpoint on drain)."""

from __future__ import annotations

from typing import Annotated, Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.addons.common import GPU_TOLERATION
from gpucloud.components.addons.kueue import QUEUE_NAME_LABEL
from gpucloud.components.base import child
from gpucloud.components.workloads.common import (
    DEFAULT_DRAIN_GRACE_SECONDS,
    JOB_LABEL_KEY,
    MAX_DRAIN_GRACE_SECONDS,
    PREEMPT_FILE,
    RDZV_PORT,
    DrainedWorkloadConfig,
    _device_resources,
    _env_list,
    _node_affinity,
    _pdb,
    _pod_metadata,
    _shm_volume,
    nccl_env,
    node_cpu_share,
)


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


class TrainingJobConfig(DrainedWorkloadConfig):
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
    queue_name: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="Kueue LocalQueue to submit through: the job is created suspended with the "
        "kueue.x-k8s.io/queue-name label and starts only when Kueue admits all its pods at once.",
    )
    # At least 30 s: the preStop hook waits grace - 10 s for the emergency checkpoint.
    termination_grace_period_seconds: Annotated[int, Field(ge=30, le=MAX_DRAIN_GRACE_SECONDS)] | pulumi.Output = Field(
        default=DEFAULT_DRAIN_GRACE_SECONDS,
        description="Time to write an emergency checkpoint after the preStop/SIGTERM: the pool's drain grace "
        "(team stacks: pool_drain_grace of the platform's poolDrainGraceSeconds); keep within 120 on spot.",
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
        # The queue label goes on the job object only: Kueue reads it there, and the pod selectors stay as before.
        job_labels = {**labels, QUEUE_NAME_LABEL: config.queue_name} if config.queue_name else labels
        # A queued job may wait hours for admission; `pulumi up` must not block on it (pulumi-kubernetes
        # await annotation).
        job_annotations = {"pulumi.com/skipAwait": "true"} if config.queue_name else None
        job_meta = {"name": job, "namespace": config.namespace, "labels": job_labels, "annotations": job_annotations}
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
        def _pre_stop(seconds: int) -> str:
            wait = max(1, seconds - 10)
            return (
                f"touch {PREEMPT_FILE}; i=0; while [ ! -f {PREEMPT_FILE}.done ] && [ $i -lt {wait} ]; "
                "do sleep 1; i=$((i+1)); done"
            )

        grace: pulumi.Output[int] = pulumi.Output.from_input(config.termination_grace_period_seconds)
        pre_stop = grace.apply(_pre_stop)
        container = {
            "name": "pytorch" if config.use_pytorch_job else "trainer",
            "image": config.image,
            "command": command,
            "env": _env_list(env),
            "ports": [{"name": "rdzv", "containerPort": RDZV_PORT}],
            "resources": _device_resources(config, gpus, config.hugepages_2mi, memory, node_cpu_share(config, 0.8)),
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
                metadata=job_meta,
                spec={
                    "runPolicy": {
                        "cleanPodPolicy": "None",
                        "backoffLimit": config.max_restarts * config.nodes,
                        **({"suspend": True} if config.queue_name else {}),
                    },
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
                metadata=job_meta,
                spec={
                    # Created suspended; Kueue unsuspends it once quota for every pod is reserved.
                    **({"suspend": True} if config.queue_name else {}),
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
                "queue_name": config.queue_name,
            }
        )
