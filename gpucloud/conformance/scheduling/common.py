"""What the scheduling sub-checks share: the sources they cite, who sets a label, one finding's shape and the
node states per pool."""

from __future__ import annotations

from gpucloud.conformance import ConformanceContext, Finding
from gpucloud.conformance.inventory import (
    KObject,
)
from gpucloud.conformance.node_agents import (
    DCGM_EXPORTER,
    DEVICE_PLUGIN,
    EFA_PLUGIN,
    GFD,
    LOG_AGENT,
    METRICS_AGENT,
    NEURON_PLUGIN,
    NFD_WORKER,
    NodeState,
    resolve,
)
from gpucloud.conformance.nodes import (
    EFA,
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    Pool,
)

CHECK = "scheduling"
DEVICE_RESOURCES = (GPU, EFA, NEURON, NEURONCORE, NEURONDEVICE)
CA_DOCS = "cluster-autoscaler AWS auto-discovery docs (cloudprovider/aws/README.md)"
PDB_DOCS = "Kubernetes {v} eviction API and disruption controller (PodDisruptionBudget)"
QUOTA_DOCS = "Kubernetes {v} ResourceQuota admission"
LIMITRANGE_DOCS = "Kubernetes {v} LimitRange defaulting (SetDefaults_LimitRangeItem) and LimitRanger admission"

# Node agents that must run on every pool with the hardware they serve; log/metrics agents on every GPU pool.
_REQUIRED_ON = {
    DEVICE_PLUGIN: ("nvidia", "error", "it advertises nvidia.com/gpu"),
    GFD: ("nvidia", "error", "it labels the node's GPUs (nvidia.com/gpu.*)"),
    NFD_WORKER: ("nvidia", "error", "it publishes the PCI labels the GPU/EFA agents select"),
    DCGM_EXPORTER: ("nvidia", "error", "it exports the GPU metrics alerts and autoscalers read"),
    EFA_PLUGIN: ("efa", "error", "it advertises vpc.amazonaws.com/efa"),
    NEURON_PLUGIN: ("neuron", "error", "it advertises aws.amazon.com/neuron"),
    LOG_AGENT: ("accelerated", "warning", "the pool's container logs are not shipped"),
    METRICS_AGENT: ("accelerated", "warning", "the pool's node metrics are not scraped"),
}
_LABEL_SETTERS = {
    "feature.node.kubernetes.io/": "node-feature-discovery (nfd-worker + nfd-master)",
    "nvidia.com/gpu.present": "the GPU Operator (only it sets nvidia.com/gpu.present)",
    "nvidia.com/gpu.deploy.": "the GPU Operator",
    "nvidia.com/": "gpu-feature-discovery (through NFD)",
    "vpc.amazonaws.com/efa.present": "an NFD custom rule (vendor 1d0f, device efa*)",
    "karpenter.sh/": "Karpenter (only on its own nodes)",
    "karpenter.k8s.aws/": "Karpenter (only on its own nodes)",
    "eks.amazonaws.com/": "EKS (only on managed node group nodes)",
    "node.kubernetes.io/instance-type": "the kubelet (cloud provider)",
    "topology.kubernetes.io/": "the kubelet (cloud provider)",
}


def _sched_source(ctx: ConformanceContext) -> str:
    return f"kube-scheduler semantics (Kubernetes {ctx.kubernetes_version})"


def who_sets(key: str) -> str:
    for prefix, who in sorted(_LABEL_SETTERS.items(), key=lambda kv: -len(kv[0])):
        if key.startswith(prefix):
            return who
    return "the node group / launch template labels"


def _finding(
    check: str, severity: str, obj: KObject | None, urn: str, field: str, message: str, expected: str, source: str
) -> Finding:
    return Finding(check, severity, urn, field, message, expected, source, object=obj.ref if obj is not None else None)  # type: ignore[arg-type]


def _pools_states(ctx: ConformanceContext) -> dict[str, list[NodeState]]:
    out: dict[str, list[NodeState]] = {}
    for st in resolve(ctx):
        out.setdefault(st.pool.urn, []).append(st)
    return out


def _hardware(pool: Pool, what: str) -> bool:
    return {"nvidia": pool.nvidia, "efa": pool.efa, "neuron": pool.neuron, "accelerated": pool.accelerated}[what]


def _missing_label_reason(reasons: list[str]) -> list[str]:
    out = []
    for r in reasons:
        out.append(r)
        for token in r.replace("(", " ").replace(";", " ").split():
            if "/" in token and not token.startswith("["):
                key = token.split("=", 1)[0]
                if "no label" in r or "absent" in r:
                    out[-1] = f"{r} [that label is set only by {who_sets(key)}]"
                break
    return out
