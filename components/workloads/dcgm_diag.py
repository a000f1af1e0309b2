"""DcgmDiag: the per-node DCGM diagnostic acceptance job."""

from __future__ import annotations

from typing import Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.addons.common import GPU_TOLERATION
from gpucloud.components.base import child
from gpucloud.components.workloads.common import (
    JOB_LABEL_KEY,
    DrainedWorkloadConfig,
    _env_list,
    _grace,
    _node_affinity,
    _pod_metadata,
)


class DcgmDiagConfig(DrainedWorkloadConfig):
    """Inputs of DcgmDiag."""

    nodes: int = Field(default=1, ge=1, le=1000, description="Nodes to test (one pod per node, all its GPUs).")
    level: Literal[1, 2, 3, 4] = Field(
        default=2, description="dcgmi diag run level: 1 seconds, 2 about 2 minutes, 3 about 15 minutes, 4 extended."
    )


def diag_resources(gpus: int) -> dict[str, dict[str, str]]:
    """Requests and limits of one diag pod: all the node's GPUs, plus host CPU and memory for DCGM.

    nv-hostengine and the diag plugins drive each GPU from its own host thread and stage test buffers in host
    memory, so both scale with the GPU count: one CPU and 1 GiB per GPU plus 2 GiB for the host engine requested,
    twice that as the limit. The smallest NVIDIA node gpucloud pools (one GPU, 4 vCPU, 16 GiB) still fits it.
    """
    cpu, memory = gpus, 2 + gpus
    return {
        "requests": {"nvidia.com/gpu": str(gpus), "cpu": str(cpu), "memory": f"{memory}Gi"},
        "limits": {"nvidia.com/gpu": str(gpus), "cpu": str(2 * cpu), "memory": f"{2 * memory}Gi"},
    }


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
                        **_grace(config),
                        "restartPolicy": "Never",
                        "tolerations": [GPU_TOLERATION],
                        "affinity": affinity,
                        "containers": [
                            {
                                "name": "dcgm-diag",
                                "image": config.image,
                                "command": ["/bin/bash", "-c", script],
                                "env": _env_list(config.env),
                                "resources": diag_resources(spec.accelerator_count),
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
