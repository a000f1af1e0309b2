"""The built-in conformance checks, imported in the order they run.

Derivation comes first (Helm rendering adds the chart's objects to the context), then the checks that read the
plan and the derived objects. Each module registers its checks with `register_check` at import. The order is data,
not import statements, so that an import sorter can never reorder the checks.
"""

from __future__ import annotations

import importlib

RUN_ORDER = (
    "helm",  # renders the pinned charts: the derived objects every later check reads
    "k8s_schema",  # Kubernetes OpenAPI and CRD schemas
    "aws_inputs",  # provider input types
    "aws_api",  # botocore API constraints
    "offering",  # pools' instance types offered in their region
    "invariants",  # KMS keys the launching principal can use, the autoscaler's version
    "scheduling",  # placement, autoscaling, drain
    "fit",  # every workload fits a node of its pool after the DaemonSets
    "pod_network",  # collective-communication interface names against the pod's interfaces
    "pod_resources",  # GPU and Neuron pods request CPU and memory
    "queueing",  # Kueue: queued workloads have a LocalQueue and fit their ClusterQueue's quota
    "kueue_config",  # Kueue: the manager configuration decodes under Kueue's strict decoder
    "upgrades",  # versions: kubelet skew, control-plane step, add-on and chart support, removed APIs
    "support_windows",  # each release inside its project's published Kubernetes support window
    "drain_timing",  # rollouts: a pool's checkpointed drain against spot's notice and EKS's drain limit
)

for _module in RUN_ORDER:
    importlib.import_module(f"gpucloud.conformance.{_module}")
