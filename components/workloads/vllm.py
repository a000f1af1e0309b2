"""VllmServer: an OpenAI-compatible vLLM server on a GPU pool, scaled by KEDA, behind an internal NLB.

One replica takes a whole node's GPUs (`--tensor-parallel-size` = the instance type's GPU count from the
catalog). Weights come from the platform's FSx for Lustre volume (a path under the mount) or straight from S3
(`--load-format runai_streamer`, credentials from the team's Pod Identity role). The pod is Ready only once the
model is loaded: vLLM's /health answers as soon as the API server runs, /v1/models lists the model once the
engine has it (llm-d "vLLM Model-Aware Readiness Probes"). KEDA scales on the request queue
(`vllm:num_requests_waiting`, vLLM's Prometheus metric) and on DCGM GPU utilisation; the Service gets an NLB from
the AWS Load Balancer Controller (`external` type, `ip` targets), internal unless the spec and the platform both
allow internet-facing.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, model_validator

from gpucloud.components.addons.common import GPU_TOLERATION
from gpucloud.components.addons.lb_controller import LB_SCHEME, LB_TARGET_TYPE, LB_TYPE
from gpucloud.components.base import child
from gpucloud.components.workloads.common import (
    JOB_LABEL_KEY,
    GpuWorkloadConfig,
    _env_list,
    _node_affinity,
    _pdb,
    _shm_volume,
    node_cpu_share,
)

VLLM_PORT = 8000
# vLLM's Prometheus gauge of requests waiting for a slot in the running batch (docs "Production Metrics").
QUEUE_METRIC = "vllm:num_requests_waiting"


class VllmServerConfig(GpuWorkloadConfig):
    """Inputs of VllmServer."""

    model: str = Field(
        min_length=1,
        description="A path under mount_path (weights on the FSx volume), an s3:// URI, or a Hugging Face model id.",
    )
    served_model_name: str | None = Field(default=None, description="Model name clients send. Unset: the model.")
    max_model_len: int | None = Field(default=None, ge=256, description="--max-model-len.")
    extra_args: list[str] = Field(default_factory=list, description="More vLLM arguments.")
    claim_name: str | None = Field(
        default=None, description="PersistentVolumeClaim of the Lustre volume holding the weights (path models)."
    )
    mount_path: str = Field(default="/fsx", description="Where the Lustre volume is mounted.")
    service_account: str | None = Field(
        default=None, description="Service account (its Pod Identity role reads the s3:// weights)."
    )
    min_replicas: int = Field(default=1, ge=1, description="Fewest replicas KEDA keeps.")
    max_replicas: int = Field(default=2, ge=1, description="Most replicas KEDA adds.")
    queue_depth_target: int = Field(default=8, ge=1, description="Waiting requests per replica before scaling out.")
    gpu_utilization_target_percent: float = Field(
        default=85, gt=0, le=100, description="Average GPU utilisation before scaling out."
    )
    prometheus_server_url: str | pulumi.Output | None = Field(
        description="Prometheus (or AMP) query endpoint KEDA reads (platform output prometheusServerUrl)."
    )
    keda_trigger_authentication: str | None = Field(
        default=None, description="ClusterTriggerAuthentication for AMP (SigV4); unset for in-cluster Prometheus."
    )
    internet_facing: bool = Field(default=False, description="Ask for an internet-facing NLB.")
    allow_internet_facing: bool = Field(
        default=False, description="The platform allows internet-facing load balancers (its addons setting)."
    )
    source_ranges: list[str] = Field(default_factory=list, description="loadBalancerSourceRanges of the NLB.")
    memory: str | None = Field(default=None, description="Memory request and limit; default 80% of the node's.")

    @property
    def tensor_parallel_size(self) -> int:
        return self.spec.accelerator_count

    @model_validator(mode="after")
    def _serving(self) -> VllmServerConfig:
        problems = []
        if self.min_replicas > self.max_replicas:
            problems.append("max_replicas: below min_replicas")
        if self.internet_facing and not self.allow_internet_facing:
            problems.append(
                "internet_facing: the platform does not allow internet-facing load balancers "
                "(addons.loadBalancerController.allowInternetFacing); serve inside the VPC or ask the platform team"
            )
        if self.model.startswith("/") and not self.model.startswith(self.mount_path.rstrip("/") + "/"):
            problems.append(f"model: a path must be under mount_path {self.mount_path} (the FSx volume)")
        if self.model.startswith("/") and not self.claim_name:
            problems.append("claim_name: weights on the FSx volume need its PersistentVolumeClaim")
        if self.prometheus_server_url is None:
            problems.append("prometheus_server_url: KEDA needs the Prometheus/AMP endpoint (platform output)")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def vllm_args(config: VllmServerConfig) -> list[str]:
    args = [
        "--model",
        config.model,
        "--served-model-name",
        config.served_model_name or config.model,
        "--tensor-parallel-size",
        str(config.tensor_parallel_size),
        "--port",
        str(VLLM_PORT),
    ]
    if config.model.startswith("s3://"):
        # vLLM streams safetensors from S3 with the Run:ai model streamer (vLLM docs "Loading models with Run:ai
        # Model Streamer"); the AWS SDK inside picks up the Pod Identity credentials.
        args += ["--load-format", "runai_streamer"]
    if config.max_model_len:
        args += ["--max-model-len", str(config.max_model_len)]
    return args + list(config.extra_args)


def nlb_annotations(internet_facing: bool) -> dict[str, str]:
    return {
        LB_TYPE: "external",
        LB_TARGET_TYPE: "ip",
        LB_SCHEME: "internet-facing" if internet_facing else "internal",
    }


class VllmServer(pulumi.ComponentResource):
    """vLLM Deployment, NLB Service, PodMonitor, PDB and the KEDA ScaledObject."""

    def __init__(
        self,
        name: str,
        config: VllmServerConfig,
        k8s_provider: pulumi.ProviderResource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:workloads:VllmServer", name, None, opts)
        app = config.job_name
        ns = config.namespace
        labels = {"app.kubernetes.io/name": app, JOB_LABEL_KEY: app}
        gpus = config.tensor_parallel_size
        memory = config.memory or f"{int(config.spec.memory_gib * 0.8)}Gi"
        # CPU beside the GPUs (the API server, tokenizer and scheduler run on the host), like the memory share.
        res = {"nvidia.com/gpu": str(gpus), "cpu": node_cpu_share(config, 0.8), "memory": memory}
        probe = {"httpGet": {"path": "/v1/models", "port": "http"}}
        container: dict[str, Any] = {
            "name": "vllm",
            "image": config.image,
            "args": vllm_args(config),
            "env": _env_list(config.env),
            "ports": [{"name": "http", "containerPort": VLLM_PORT}],
            "resources": {"requests": dict(res), "limits": dict(res)},
            # Loading tens of GB of weights takes minutes: up to 30 minutes before liveness applies.
            "startupProbe": {**probe, "periodSeconds": 10, "failureThreshold": 180},
            "readinessProbe": {**probe, "periodSeconds": 10, "failureThreshold": 3},
            "livenessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 20},
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
        }
        # Tensor-parallel workers exchange through /dev/shm (NCCL); give it a quarter of the node's memory.
        volumes: list[dict[str, Any]] = [_shm_volume(max(1, int(config.spec.memory_gib / 4)))]
        if config.claim_name:
            container["volumeMounts"].append({"name": "weights", "mountPath": config.mount_path, "readOnly": True})
            volumes.append({"name": "weights", "persistentVolumeClaim": {"claimName": config.claim_name}})
        pod_spec: dict[str, Any] = {
            "tolerations": [GPU_TOLERATION],
            "affinity": _node_affinity(config),
            "terminationGracePeriodSeconds": 60,
            "containers": [container],
            "volumes": volumes,
        }
        if config.service_account:
            pod_spec["serviceAccountName"] = config.service_account
        opts_k8s = child(self, provider=k8s_provider)
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata={"name": app, "namespace": ns, "labels": labels},
            spec={
                "replicas": config.min_replicas,
                "selector": {"matchLabels": labels},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
                "template": {"metadata": {"labels": labels}, "spec": pod_spec},
            },
            # KEDA owns replicas after creation.
            opts=child(self, provider=k8s_provider, ignore_changes=["spec.replicas"]),
        )
        service_spec: dict[str, Any] = {
            "type": "LoadBalancer",
            "selector": labels,
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
        }
        if config.source_ranges:
            service_spec["loadBalancerSourceRanges"] = list(config.source_ranges)
        self.service = k8s.core.v1.Service(
            f"{name}-service",
            metadata={
                "name": app,
                "namespace": ns,
                "labels": labels,
                "annotations": nlb_annotations(config.internet_facing),
            },
            spec=service_spec,
            opts=opts_k8s,
        )
        self.pod_monitor = k8s.apiextensions.CustomResource(
            f"{name}-podmonitor",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={"name": app, "namespace": ns, "labels": labels},
            # vLLM serves its Prometheus metrics on the API port at /metrics.
            spec={"selector": {"matchLabels": labels}, "podMetricsEndpoints": [{"port": "http", "path": "/metrics"}]},
            opts=opts_k8s,
        )
        self.pdb = _pdb(self, name, ns, labels, k8s_provider, maxUnavailable=1)
        pods = f'namespace="{ns}", pod=~"{app}-.*"'
        triggers = [
            # AverageValue: KEDA divides the sum by the replica count, so the target is waiting requests per replica.
            self._trigger(config, f"sum({QUEUE_METRIC}{{{pods}}})", str(config.queue_depth_target), "AverageValue"),
            self._trigger(
                config, f"avg(DCGM_FI_DEV_GPU_UTIL{{{pods}}})", f"{config.gpu_utilization_target_percent:g}", "Value"
            ),
        ]
        self.scaled_object = k8s.apiextensions.CustomResource(
            f"{name}-scaledobject",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata={"name": app, "namespace": ns, "labels": labels},
            spec={
                "scaleTargetRef": {"name": app},
                "minReplicaCount": config.min_replicas,
                "maxReplicaCount": config.max_replicas,
                "pollingInterval": 15,
                "cooldownPeriod": 300,
                "advanced": {
                    "horizontalPodAutoscalerConfig": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 900}}}
                },
                "triggers": triggers,
            },
            opts=child(self, provider=k8s_provider, depends_on=[self.deployment]),
        )
        self.service_name = app
        self.url = f"http://{app}.{ns}.svc.cluster.local/v1"
        self.scheme = nlb_annotations(config.internet_facing)[LB_SCHEME]
        self.register_outputs({"service_name": app, "tensor_parallel_size": gpus, "scheme": self.scheme})

    @staticmethod
    def _trigger(config: VllmServerConfig, query: str, threshold: str, metric_type: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "serverAddress": config.prometheus_server_url,
            "query": query,
            "threshold": threshold,
            "ignoreNullValues": "true",
        }
        trigger: dict[str, Any] = {"type": "prometheus", "metricType": metric_type, "metadata": metadata}
        if config.keda_trigger_authentication:
            metadata["awsRegion"] = config.region
            trigger["authenticationRef"] = {
                "name": config.keda_trigger_authentication,
                "kind": "ClusterTriggerAuthentication",
            }
        return trigger
