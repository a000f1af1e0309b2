"""NcclTest: the all-reduce bandwidth acceptance job across a pool's nodes."""

from __future__ import annotations

import shlex
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.addons.common import GPU_TOLERATION
from gpucloud.components.base import child
from gpucloud.components.workloads.common import (
    JOB_LABEL_KEY,
    DrainedWorkloadConfig,
    _device_resources,
    _env_list,
    _grace,
    _node_affinity,
    _pod_metadata,
    _shm_volume,
    nccl_env,
    node_cpu_share,
)


class NcclTestConfig(DrainedWorkloadConfig):
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
            "resources": _device_resources(config, gpus, "5120Mi", memory, node_cpu_share(config, 0.5)),
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
                        **_grace(config),
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
