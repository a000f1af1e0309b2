"""Node health gate: GPU nodes start tainted and join only after a DCGM diagnostic (and on EFA pools an EFA check)
passes; failing nodes are cordoned, labelled, reported and replaced.

The node pools register every new NVIDIA node with HEALTH_TAINT (a Karpenter startupTaint; a kubelet taint on
managed and self-managed pools). A DaemonSet per pool group tolerates it and runs, in one pod per node:

- `dcgm`: `dcgmi diag -r <level>` once, then `dcgmi diag -r 1` every periodicMinutes, writing its verdict;
- `efa` (EFA pools): libfabric's `fi_info -p efa -t FI_EP_RDM`, which fails when the EFA device or provider is
  missing, writing its verdict;
- `agent` (node_health_agent.py): removes the taint once every verdict passes; on a failure, or a fatal XID that
  DCGM reports for the node (the same XIDs as the GpuFatalXidError alert), cordons the node, labels it
  gpucloud.io/health=failed, posts a Warning Event, sets AcceleratedHardwareReady=False (EKS node auto-repair
  and Karpenter NodeRepair replace such nodes) and marks the instance Unhealthy in its Auto Scaling group.

The agent's RBAC is limited to reading and patching nodes (and their status) and creating Events; its IAM role may
only call autoscaling:SetInstanceHealth on this cluster's groups.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.charts.images import pin_ref
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.addons.common import FATAL_XIDS, GPU_TOLERATION, POOL_LABEL
from gpucloud.components.base import ComponentConfig
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.nodepools.userdata import Taint
from gpucloud.spec import AddonsSpec, NodePoolSpec
from gpucloud.spec.addons import HEALTH_TAINT_KEY

HEALTH_TAINT = Taint(HEALTH_TAINT_KEY, "unchecked", "NoSchedule")
# Read by the conformance node model: a taint named here is removed by this DaemonSet once it runs on the node,
# so workloads need not tolerate it (gpucloud/conformance/nodes.py, startup taints).
REMOVES_TAINT_ANNOTATION = "gpucloud.io/removes-taint"
SERVICE_ACCOUNT = "gpu-node-health"
AGENT_SOURCE = Path(__file__).with_name("node_health_agent.py")
STATUS_DIR = "/status"


def dcgm_script(level: int, periodic_minutes: int) -> str:
    """The checker loop: a full diagnostic at node start, a quick one periodically; verdicts written atomically."""
    periodic = (
        f"while true; do sleep {periodic_minutes * 60}; run 1; done"
        if periodic_minutes
        else "while true; do sleep 3600; done"
    )
    return (
        "set -u\n"
        # The diagnostic talks to a host engine; run one inside the pod (it exits with the pod).
        "nv-hostengine -n >/dev/null 2>&1 &\n"
        "sleep 5\n"
        "run() {\n"
        '  if dcgmi diag -r "$1" >/tmp/diag.out 2>&1; then v=pass;\n'
        "  else v=\"fail: dcgmi diag -r $1: $(tail -n 8 /tmp/diag.out | tr '\\n' ' ')\"; fi\n"
        f'  echo "$v" >{STATUS_DIR}/.gpu && mv {STATUS_DIR}/.gpu {STATUS_DIR}/gpu\n'
        "}\n"
        f"run {level}\n"
        f"{periodic}\n"
    )


def efa_script() -> str:
    return (
        "if fi_info -p efa -t FI_EP_RDM >/tmp/efa.out 2>&1; then v=pass;\n"
        "else v=\"fail: fi_info -p efa: $(tail -n 4 /tmp/efa.out | tr '\\n' ' ')\"; fi\n"
        f'echo "$v" >{STATUS_DIR}/.efa && mv {STATUS_DIR}/.efa {STATUS_DIR}/efa\n'
        "while true; do sleep 3600; done\n"
    )


def scaling_policy(cluster_name: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReplaceFailedGpuNodes",
                "Effect": "Allow",
                "Action": "autoscaling:SetInstanceHealth",
                "Resource": "*",
                # Both kinds of GPU group carry this tag (EKS sets it on managed groups' ASGs, the node pool
                # component on self-managed ones): no other cluster's instances can be touched.
                "Condition": {"StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"}},
            }
        ],
    }


class NodeHealthConfig(ComponentConfig):
    """Inputs of NodeHealth."""

    addons: AddonsSpec = Field(description="The add-ons section of the stack spec (nodeHealth, acceptance, prefix).")
    pools: list[NodePoolSpec] = Field(min_length=1, description="The platform's node pools.")
    prometheus_url: Any = Field(
        default=None, description="In-cluster Prometheus URL for fatal-XID lookups (None: XIDs not watched)."
    )


class NodeHealth(AddonsBase):
    """Health DaemonSets on the NVIDIA pools, their RBAC, and the Pod Identity role that marks instances unhealthy."""

    def __init__(
        self, name: str, config: NodeHealthConfig, cluster: ClusterHandle, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpucloud:addons:NodeHealth", name, None, opts)
        self._name = name
        self._config = config
        self._cluster = cluster
        self.releases = {}
        self.namespaces = {}
        spec = config.addons.node_health
        namespace = f"{config.addons.namespace_prefix}gpu-health"
        # The checks run privileged (all GPUs and EFA devices of the host, the DCGM host engine).
        ns = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={
                "name": namespace,
                "labels": {
                    "app.kubernetes.io/managed-by": "gpucloud",
                    "pod-security.kubernetes.io/enforce": "privileged",
                },
            },
            opts=self._k8s(),
        )
        labels = {"app.kubernetes.io/name": "gpu-node-health", "app.kubernetes.io/managed-by": "gpucloud"}
        sa = k8s.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata={"name": SERVICE_ACCOUNT, "namespace": namespace, "labels": labels},
            opts=self._k8s(depends_on=[ns]),
        )
        role = k8s.rbac.v1.ClusterRole(
            f"{name}-clusterrole",
            metadata={"name": "gpucloud-node-health", "labels": labels},
            rules=[
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
            ],
            opts=self._k8s(),
        )
        binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-clusterrolebinding",
            metadata={"name": "gpucloud-node-health", "labels": labels},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gpucloud-node-health"},
            subjects=[{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": namespace}],
            opts=self._k8s(depends_on=[role, sa]),
        )
        self.role = None
        if spec.replace_failed:
            policy = pulumi.Output.from_input(cluster.name).apply(lambda n: json.dumps(scaling_policy(n)))
            self.role = self._pod_identity_role("node-health", namespace, SERVICE_ACCOUNT, policy, [])
        agent = k8s.core.v1.ConfigMap(
            f"{name}-agent",
            metadata={"name": "gpu-node-health-agent", "namespace": namespace, "labels": labels},
            data={"agent.py": AGENT_SOURCE.read_text(encoding="utf-8")},
            opts=self._k8s(depends_on=[ns]),
        )
        nvidia = [p for p in config.pools if p.specs[0].is_gpu and p.specs[0].manufacturer == "nvidia"]
        efa_image = spec.efa_check_image or config.addons.acceptance.nccl_test_image
        groups = {
            "gpu": [p.name for p in nvidia if not (p.efa.enabled and efa_image)],
            "efa": [p.name for p in nvidia if p.efa.enabled and efa_image],
        }
        self.daemon_sets: dict[str, k8s.apps.v1.DaemonSet] = {}
        for group, pools in groups.items():
            if not pools:
                continue
            ds_name = "gpu-node-health" if group == "gpu" else "gpu-node-health-efa"
            ds_labels = {**labels, "gpucloud.io/health-group": group}
            checks = ["gpu", "efa"] if group == "efa" else ["gpu"]
            containers = [self._dcgm_container()]
            if group == "efa":
                assert efa_image is not None
                containers.append(self._efa_container(efa_image))
            containers.append(self._agent_container(checks))
            self.daemon_sets[group] = k8s.apps.v1.DaemonSet(
                f"{name}-{group}",
                metadata={
                    "name": ds_name,
                    "namespace": namespace,
                    "labels": ds_labels,
                    "annotations": {REMOVES_TAINT_ANNOTATION: HEALTH_TAINT.key},
                },
                spec={
                    "selector": {"matchLabels": ds_labels},
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}},
                    "template": {
                        "metadata": {"labels": ds_labels},
                        "spec": {
                            "serviceAccountName": SERVICE_ACCOUNT,
                            "tolerations": [
                                GPU_TOLERATION,
                                {"key": HEALTH_TAINT.key, "operator": "Exists", "effect": "NoSchedule"},
                                # A quarantined (cordoned) node keeps its agent so the failure stays reported.
                                {
                                    "key": "node.kubernetes.io/unschedulable",
                                    "operator": "Exists",
                                    "effect": "NoSchedule",
                                },
                            ],
                            "affinity": {
                                "nodeAffinity": {
                                    "requiredDuringSchedulingIgnoredDuringExecution": {
                                        "nodeSelectorTerms": [
                                            {
                                                "matchExpressions": [
                                                    {"key": POOL_LABEL, "operator": "In", "values": pools}
                                                ]
                                            }
                                        ]
                                    }
                                }
                            },
                            "containers": containers,
                            "volumes": [
                                {"name": "status", "emptyDir": {}},
                                {"name": "agent", "configMap": {"name": "gpu-node-health-agent"}},
                            ],
                        },
                    },
                },
                opts=self._k8s(depends_on=[binding, agent, *([self.role] if self.role is not None else [])]),
            )
        self.namespace = namespace
        self.register_outputs(
            {"namespace": namespace, "daemon_sets": sorted(self.daemon_sets), "taint": f"{HEALTH_TAINT.key}"}
        )

    def _dcgm_container(self) -> dict[str, Any]:
        spec = self._config.addons.node_health
        return {
            "name": "dcgm",
            "image": pin_ref(spec.checker_image),
            "command": ["/bin/sh", "-c", dcgm_script(spec.diag_level, spec.periodic_minutes)],
            # All of the node's GPUs without requesting them (the device plugin may not run yet, and a GPU request
            # would keep the check off a node whose GPUs the jobs hold): the NVIDIA runtime injects them.
            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
            "securityContext": {"privileged": True},
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
            "volumeMounts": [{"name": "status", "mountPath": STATUS_DIR}],
        }

    def _efa_container(self, image: str) -> dict[str, Any]:
        return {
            "name": "efa",
            "image": pin_ref(image),
            "command": ["/bin/sh", "-c", efa_script()],
            "securityContext": {"privileged": True},
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
            "volumeMounts": [{"name": "status", "mountPath": STATUS_DIR}],
        }

    def _agent_container(self, checks: list[str]) -> dict[str, Any]:
        spec = self._config.addons.node_health
        env: list[dict[str, Any]] = [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "POD_NAMESPACE", "value": "default"},
            {"name": "CHECKS", "value": ",".join(checks)},
            {"name": "STATUS_DIR", "value": STATUS_DIR},
            {"name": "TAINT_KEY", "value": HEALTH_TAINT.key},
            {"name": "AWS_REGION", "value": self._config.region},
            {"name": "REPLACE_FAILED", "value": "true" if spec.replace_failed else "false"},
            {"name": "FATAL_XIDS", "value": ",".join(str(x) for x in FATAL_XIDS)},
        ]
        if self._config.prometheus_url is not None:
            env.append({"name": "PROMETHEUS_URL", "value": self._config.prometheus_url})
        return {
            "name": "agent",
            "image": pin_ref(spec.actor_image),
            "command": ["python3", "/agent/agent.py"],
            "env": env,
            "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
            "volumeMounts": [
                {"name": "status", "mountPath": STATUS_DIR, "readOnly": True},
                {"name": "agent", "mountPath": "/agent", "readOnly": True},
            ],
        }
