"""InferenceDeployment: a GPU model server Deployment with its Service, PDB and optional KEDA scaling."""

from __future__ import annotations

from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, model_validator

from gpucloud.components.addons.common import EFA_RESOURCE, GPU_TOLERATION
from gpucloud.components.base import child
from gpucloud.components.workloads.common import (
    JOB_LABEL_KEY,
    GpuWorkloadConfig,
    _env_list,
    _node_affinity,
    _pdb,
    _shm_volume,
    nccl_env,
)


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
