"""GPU workload templates a team stack instantiates: distributed training, inference, and node acceptance jobs.

Every template derives its GPU, EFA and NCCL settings from the catalog entry of the pool's instance type, so a
job asks for exactly the devices a node has and gets the libfabric/NCCL environment that type needs.
Kubernetes objects are written in the API's own camelCase so they read like the manifests they become.
"""

from gpucloud.components.workloads.common import (
    DEFAULT_DRAIN_GRACE_SECONDS,
    DO_NOT_DISRUPT,
    DRAIN_GRACE_EXPORT,
    JOB_LABEL_KEY,
    POD_SOCKET_IFNAME,
    POOL_LABEL_KEY,
    PREEMPT_FILE,
    RDZV_PORT,
    SPOT_NOTICE_SECONDS,
    DrainedWorkloadConfig,
    GpuWorkloadConfig,
    nccl_env,
    pool_drain_grace,
)
from gpucloud.components.workloads.dcgm_diag import DcgmDiag, DcgmDiagConfig
from gpucloud.components.workloads.inference import InferenceDeployment, InferenceDeploymentConfig
from gpucloud.components.workloads.nccl_test import NcclTest, NcclTestConfig
from gpucloud.components.workloads.training import TrainingJob, TrainingJobConfig, training_pdb_policy
from gpucloud.components.workloads.vllm import VllmServer, VllmServerConfig

__all__ = [
    "DEFAULT_DRAIN_GRACE_SECONDS",
    "DO_NOT_DISRUPT",
    "DRAIN_GRACE_EXPORT",
    "JOB_LABEL_KEY",
    "POD_SOCKET_IFNAME",
    "POOL_LABEL_KEY",
    "PREEMPT_FILE",
    "RDZV_PORT",
    "SPOT_NOTICE_SECONDS",
    "DcgmDiag",
    "DcgmDiagConfig",
    "DrainedWorkloadConfig",
    "GpuWorkloadConfig",
    "InferenceDeployment",
    "InferenceDeploymentConfig",
    "NcclTest",
    "NcclTestConfig",
    "TrainingJob",
    "TrainingJobConfig",
    "VllmServer",
    "VllmServerConfig",
    "nccl_env",
    "pool_drain_grace",
    "training_pdb_policy",
]
