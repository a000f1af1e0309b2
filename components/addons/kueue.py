"""Kueue: GPU quotas per pool capacity flavour, the platform's cohort, and all-or-nothing admission of jobs.

The platform owns the capacity: one ResourceFlavor per (pool, capacity flavour) selecting exactly the nodes that
flavour launches, and one ClusterQueue per capacity flavour (on-demand, spot, reserved, capacity-block) whose
nominal quota is those pools' allocatable resources at their maximum size. Those queues admit nothing
themselves (no namespace selector): they lend everything to the cohort. Each team stack adds its own
ClusterQueue in the cohort (team_cluster_queue below) that borrows up to the team's quota, and a LocalQueue in
its namespace; fair sharing and preemption between teams happen in the cohort.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pydantic import Field

from gpucloud.catalog.allocatable import reserve
from gpucloud.charts import lock as charts_lock
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.base import ComponentConfig
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.nodepools.capacity import capacity_types, managed_groups, self_managed_sizes
from gpucloud.components.nodepools.common import GPU_TAINT, LABEL_PREFIX, _capacity_label
from gpucloud.fleet import labels as L
from gpucloud.spec import AddonsSpec, NodePoolSpec

KUEUE_API = "kueue.x-k8s.io/v1beta2"  # the storage version of kueue 0.19's CRDs (v1beta1 is still served)
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
CAPACITY_LABEL = f"{LABEL_PREFIX}/capacity-type"
KARPENTER_CAPACITY_LABEL = L.CAPACITY_TYPE
GPU = L.NVIDIA_GPU
COVERED = (GPU, "cpu", "memory")
# Kueue fails a workload that requests a resource no flavour of its ClusterQueue covers. EFA interfaces and
# huge pages are per-node devices the scheduler already accounts for; quota on them adds nothing.
EXCLUDED_RESOURCE_PREFIXES = ("vpc.amazonaws.com/", "hugepages-")
# The order Kueue tries flavours in: capacity that is paid for whether used or not first, spot last (as the
# cluster-autoscaler priority expander does).
KIND_ORDER = ("capacity-block", "reserved", "on-demand", "mixed", "any", "spot")


@dataclass(frozen=True)
class Flavour:
    """One ResourceFlavor: the nodes of one pool launched on one capacity flavour."""

    name: str
    pool: str
    kind: str
    node_labels: dict[str, str]
    nodes: int
    gpus_per_node: int
    cpu_millis_per_node: int
    memory_mib_per_node: int
    taints: list[dict[str, str]] = field(default_factory=list)

    def quota(self) -> dict[str, str]:
        return {
            GPU: str(self.nodes * self.gpus_per_node),
            "cpu": f"{self.nodes * self.cpu_millis_per_node}m",
            "memory": f"{self.nodes * self.memory_mib_per_node}Mi",
        }


def _allocatable(pool: NodePoolSpec) -> tuple[int, int]:
    """(cpu millicores, memory MiB) a node of the pool leaves to pods: capacity minus the EKS AMI's reserve,
    for the smallest of the pool's instance types (a quota must hold whichever type the pool launches)."""
    out = []
    for spec in pool.specs:
        cores, mem_bytes, _ = reserve(spec)
        out.append((int(spec.vcpu * 1000 - cores * 1000), int(spec.memory_gib * 1024 - mem_bytes / 2**20)))
    return min(c for c, _ in out), min(m for _, m in out)


def pool_flavours(pools: list[NodePoolSpec]) -> list[Flavour]:
    """The flavours of the NVIDIA GPU pools, with the node labels each pool's nodes actually carry.

    Managed node groups and single-capacity ASGs label their nodes gpucloud.io/capacity-type (the node pool
    component); a mixed-instances ASG launches on-demand and spot from one template, so its nodes are one
    'mixed' flavour. Karpenter sets karpenter.sh/capacity-type itself; a Karpenter pool that may launch several
    capacity types is one 'any' flavour, because its NodePool limit caps them together.
    """
    out: list[Flavour] = []
    for pool in pools:
        spec = pool.specs[0]
        if not (spec.is_gpu and spec.manufacturer == "nvidia"):
            continue
        cpu, mem = _allocatable(pool)
        base = {f"{LABEL_PREFIX}/pool": pool.name}
        taint = [{"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": GPU_TAINT.effect}]
        parts: list[tuple[str, dict[str, str], int]] = []
        if pool.backend == "managed":
            for group in managed_groups(pool):
                kind = _capacity_label(pool, group)
                parts.append((kind, {**base, CAPACITY_LABEL: kind}, group.sizes.max))
        elif pool.backend == "self-managed":
            kind = _capacity_label(pool, None)
            parts.append((kind, {**base, CAPACITY_LABEL: kind}, self_managed_sizes(pool).max))
        else:
            kinds = capacity_types(pool)
            if len(kinds) == 1:
                parts.append((kinds[0], {**base, KARPENTER_CAPACITY_LABEL: kinds[0]}, pool.max_size))
            else:
                parts.append(("any", dict(base), pool.max_size))
        for kind, labels, nodes in parts:
            if nodes <= 0:
                continue
            out.append(
                Flavour(f"{pool.name}-{kind}", pool.name, kind, labels, nodes, spec.accelerator_count, cpu, mem, taint)
            )
    return out


@functools.cache
def chart_manager_config(version: str) -> dict[str, Any]:
    """The pinned chart's own manager configuration (managerConfig.controllerManagerConfigYaml of its values.yaml),
    parsed once per process with libyaml where present: every platform stack of `plan --all` reads the same one,
    and the pure-Python parser took about 0.15 s per stack. Callers copy it before changing it."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    chart_values = yaml.load((charts_lock.pin("kueue", version).chart_dir / "values.yaml").read_text(), Loader=loader)
    config: dict[str, Any] = yaml.load(chart_values["managerConfig"]["controllerManagerConfigYaml"], Loader=loader)
    return config


def kueue_values(spec: AddonsSpec) -> dict[str, Any]:
    """Chart values: the chart's own manager configuration with gang admission and fair sharing added.

    The configuration is one YAML string in the chart (managerConfig.controllerManagerConfigYaml); it is read
    from the pinned chart's values.yaml and extended, so every upstream default (integrations, webhook, probes)
    stays as shipped.
    """
    q = spec.kueue
    config = copy.deepcopy(chart_manager_config(q.version))
    # A gang whose pods are not all Ready in time is evicted and requeued with backoff, so a multi-node job
    # never sits on part of its GPUs; the field names follow the chart's commented v1beta2 example.
    config["waitForPodsReady"] = {
        "timeout": q.wait_for_pods_ready_timeout,
        "blockAdmission": False,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
    }
    if q.fair_sharing:
        config["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    config["resources"] = {"excludeResourcePrefixes": list(EXCLUDED_RESOURCE_PREFIXES)}
    # The training template can submit a PyTorchJob; the chart leaves that integration commented out, and Kueue
    # never unsuspends a job of a framework it does not manage. Kueue defers an integration until its CRD exists.
    frameworks = config.setdefault("integrations", {}).setdefault("frameworks", [])
    if "kubeflow.org/pytorchjob" not in frameworks:
        frameworks.append("kubeflow.org/pytorchjob")
    return {"managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config, sort_keys=False)}}


def lending_queue_spec(cohort: str, flavours: list[Flavour]) -> dict[str, Any]:
    return {
        "cohortName": cohort,
        # No namespaceSelector: no LocalQueue's workloads are admitted here; the quota is lent to the cohort.
        "resourceGroups": [
            {
                "coveredResources": list(COVERED),
                "flavors": [
                    {"name": f.name, "resources": [{"name": r, "nominalQuota": f.quota()[r]} for r in COVERED]}
                    for f in flavours
                ],
            }
        ],
    }


def team_cluster_queue_spec(
    cohort: str, namespace: str, flavours: list[str], gpus: int, cpu: str, memory: str, weight: str = "1"
) -> dict[str, Any]:
    """A team's ClusterQueue: no quota of its own, borrows up to the team's quota per flavour from the cohort.

    reclaimWithinCohort lets a team take back what others borrowed once it gets nominal quota; withinClusterQueue
    lets the team's high-priority jobs preempt its own low-priority ones; fair sharing (Kueue configuration)
    preempts the team furthest above its share when several borrow.
    """
    limits = {GPU: str(gpus), "cpu": cpu, "memory": memory}
    return {
        "cohortName": cohort,
        # Only the team's own namespace may point a LocalQueue at it.
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        "fairSharing": {"weight": weight},
        "resourceGroups": [
            {
                "coveredResources": list(COVERED),
                "flavors": [
                    {
                        "name": name,
                        "resources": [{"name": r, "nominalQuota": "0", "borrowingLimit": limits[r]} for r in COVERED],
                    }
                    for name in flavours
                ],
            }
        ],
    }


class KueueConfig(ComponentConfig):
    """Inputs of Kueue."""

    addons: AddonsSpec = Field(description="The add-ons section of the stack spec (kueue settings, namespaces).")
    pools: list[NodePoolSpec] = Field(min_length=1, description="The platform's node pools (flavours, quotas).")


class Kueue(AddonsBase):
    """Kueue release, ResourceFlavors per pool capacity flavour and the cohort's lending ClusterQueues."""

    def __init__(
        self, name: str, config: KueueConfig, cluster: ClusterHandle, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpucloud:addons:Kueue", name, None, opts)
        self._name = name
        self._config = config
        self._cluster = cluster
        self.releases = {}
        self.namespaces = {}
        q = config.addons.kueue
        namespace = f"{config.addons.namespace_prefix}kueue-system"
        self._namespace("kueue", namespace)
        self.release = self._release("kueue", "kueue", q.version, namespace, kueue_values(config.addons))
        self.flavours = pool_flavours(config.pools)
        self.resource_flavors: dict[str, k8s.apiextensions.CustomResource] = {}
        for f in self.flavours:
            self.resource_flavors[f.name] = k8s.apiextensions.CustomResource(
                f"{name}-flavor-{f.name}",
                api_version=KUEUE_API,
                kind="ResourceFlavor",
                metadata={"name": f.name, "labels": {f"{LABEL_PREFIX}/pool": f.pool}},
                # nodeTaints: Kueue assigns the flavour only to workloads that tolerate the GPU taint.
                spec={"nodeLabels": f.node_labels, "nodeTaints": f.taints},
                opts=self._k8s(depends_on=[self.release]),
            )
        self.cluster_queues: dict[str, k8s.apiextensions.CustomResource] = {}
        by_kind: dict[str, list[Flavour]] = {}
        for f in self.flavours:
            by_kind.setdefault(f.kind, []).append(f)
        for kind in sorted(by_kind, key=lambda k: KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER)):
            cq_name = f"{q.cohort}-{kind}"
            self.cluster_queues[kind] = k8s.apiextensions.CustomResource(
                f"{name}-cq-{kind}",
                api_version=KUEUE_API,
                kind="ClusterQueue",
                metadata={"name": cq_name, "labels": {"gpucloud.io/capacity-type": kind}},
                spec=lending_queue_spec(q.cohort, by_kind[kind]),
                opts=self._k8s(depends_on=[self.release, *(self.resource_flavors[f.name] for f in by_kind[kind])]),
            )
        self.cohort = q.cohort
        self.flavours_by_pool: dict[str, list[str]] = {}
        for f in self.flavours:
            self.flavours_by_pool.setdefault(f.pool, []).append(f.name)
        self.register_outputs(
            {
                "cohort": self.cohort,
                "flavours": self.flavours_by_pool,
                "gpus": {f.name: f.nodes * f.gpus_per_node for f in self.flavours},
                "capacity_queues": sorted(f"{q.cohort}-{k}" for k in by_kind),
            }
        )
