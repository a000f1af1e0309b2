"""Which EKS cluster of the plan a resource is on, and whether the plan runs Kubernetes workloads on a pool's cluster.

A node pool is on the cluster its inputs are built from (a managed node group's `clusterName`, a launch template's
endpoint in its user data) or, for a component's children, on the cluster that component holds; a Kubernetes
object is on the cluster its provider's kubeconfig is built from. Both are read from the dependencies the SDK
records, nearest first: the first level of the walk that reaches exactly one `aws:eks/cluster:Cluster` names it.
An object on the default provider (the ambient kubeconfig) or on a provider whose kubeconfig is a literal is on
no cluster the plan can name.
"""

from __future__ import annotations

from typing import Literal

from gpucloud.conformance import ConformanceContext
from gpucloud.fleet import types as T
from gpucloud.plan.model import ResourceRecord, is_unknown

# How far the walk goes: a pool's record reaches its cluster in one step (clusterName) or two (a launch template
# whose user data holds the endpoint); a provider in one (a kubeconfig from the cluster's outputs) or, from a
# component's kubeconfig output, two. Further out, the dependencies are the network and IAM, never a cluster.
_MAX_DEPTH = 4

Verdict = Literal["yes", "no", "unknown"]
# The tag EKS and the cluster autoscaler read to tell which cluster a node or an ASG belongs to.
_CLUSTER_TAG = "kubernetes.io/cluster/"


class ClusterIndex:
    """The plan's clusters and, per resource, the one it is on (None: cannot tell)."""

    def __init__(self, resources: list[ResourceRecord]) -> None:
        self.by_urn = {r.urn: r for r in resources}
        self.clusters = sorted(r.urn for r in resources if r.type == T.EKS_CLUSTER)
        # A component (an eks:index:Cluster, a program's own) that holds a cluster stands for it.
        self._held: dict[str, set[str]] = {}
        for urn in self.clusters:
            parent = self.by_urn[urn].parent
            if parent:
                self._held.setdefault(parent, set()).add(urn)
        # By the name EKS knows it by: what a managed node group's `clusterName` and a node's
        # `kubernetes.io/cluster/<name>` tag say.
        self._named: dict[str, str] = {}
        for urn in self.clusters:
            name = self.by_urn[urn].inputs.get("name")
            if isinstance(name, str) and name and not is_unknown(name):
                self._named[name] = urn
        self._cache: dict[str, str | None] = {}

    def cluster_of(self, urn: str) -> str | None:
        """The cluster the resource `urn` is on, for a Kubernetes resource through its provider."""
        record = self.by_urn.get(urn)
        if record is None:
            return None
        if record.type.startswith("kubernetes:"):
            # A provider reference is "<provider urn>::<id>"; none is the default provider (ambient kubeconfig).
            provider = (record.provider or "").rsplit("::", 1)[0]
            return self._nearest(provider) if provider else None
        return self._nearest(urn)

    def _nearest(self, start: str) -> str | None:
        if start in self._cache:
            return self._cache[start]
        found: str | None = None
        seen = {start}
        level = [start]
        for _ in range(_MAX_DEPTH + 1):
            hits = set().union(*(self._stands_for(u) for u in level))
            if hits:
                found = next(iter(hits)) if len(hits) == 1 else None  # two clusters as near: cannot tell
                break
            nxt: list[str] = []
            for u in level:
                for v in self._neighbours(u):
                    if v not in seen:
                        seen.add(v)
                        nxt.append(v)
            if not nxt:
                break
            level = nxt
        self._cache[start] = found
        return found

    def _stands_for(self, urn: str) -> set[str]:
        record = self.by_urn.get(urn)
        if record is None:
            return set()
        if record.type == T.EKS_CLUSTER:
            return {urn}
        named = self._named_in(record)
        if named:
            return named
        return self._held.get(urn, set())

    def _named_in(self, record: ResourceRecord) -> set[str]:
        """The clusters a pool names: a managed node group's `clusterName`, an ASG's cluster tag."""
        found: set[str] = set()
        name = record.inputs.get("clusterName")
        if isinstance(name, str) and name in self._named:
            found.add(self._named[name])
        tags = record.inputs.get("tags")
        for tag in tags if isinstance(tags, list) else []:
            key = tag.get("key") if isinstance(tag, dict) else None
            if isinstance(key, str) and key.startswith(_CLUSTER_TAG) and key[len(_CLUSTER_TAG) :] in self._named:
                found.add(self._named[key[len(_CLUSTER_TAG) :]])
        return found

    def _neighbours(self, urn: str) -> list[str]:
        record = self.by_urn.get(urn)
        if record is None:
            return []
        out = list(record.dependencies)
        for urns in record.property_dependencies.values():
            out.extend(urns)
        if record.parent:
            out.append(record.parent)
        # A resource passed as an input reaches the engine as its URN (an eks ManagedNodeGroup's `cluster`); the
        # SDK records no dependency for it.
        out.extend(u for u in _strings(record.inputs) if u in self.by_urn)
        return out


def _strings(value: object, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        return [value] if value.startswith("urn:pulumi:") else []
    if depth > 3:
        return []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def _index(ctx: ConformanceContext) -> ClusterIndex:
    cached = ctx.facts.get("_cluster_index")
    if cached is None or cached[0] != len(ctx.plan.resources):
        cached = (len(ctx.plan.resources), ClusterIndex(ctx.plan.resources))
        ctx.facts["_cluster_index"] = cached
    index: ClusterIndex = cached[1]
    return index


def workload_urns(ctx: ConformanceContext) -> list[str]:
    """The plan's resources that run something on Kubernetes: a Helm release or chart (whose objects may not be
    rendered), or an object with a pod template (registered, or rendered from a chart: its owner's URN)."""
    from gpucloud.conformance.inventory import objects, pod_sets

    urns = {r.urn for r in ctx.plan if r.type.startswith("kubernetes:helm.sh/")}
    urns |= {o.urn for o in objects(ctx) if any(ps.pod_spec.get("containers") for ps in pod_sets(o))}
    return sorted(urns)


def runs_workloads_on(ctx: ConformanceContext, pool_urn: str) -> Verdict:
    """Whether the plan runs Kubernetes workloads on the cluster of the pool `pool_urn`.

    "yes" only when sure: a workload is on the pool's cluster, or the plan has at most one cluster (then every
    workload is taken to be on it, as on gpucloud's own stacks). "no" when the plan runs none, or all of them
    on other clusters it names; "unknown" when a workload's cluster, or the pool's, cannot be told apart.
    """
    workloads = workload_urns(ctx)
    if not workloads:
        return "no"
    index = _index(ctx)
    if len(index.clusters) <= 1:
        return "yes"
    pool_cluster = index.cluster_of(pool_urn)
    on = {index.cluster_of(u) for u in workloads}
    if pool_cluster is not None and pool_cluster in on:
        return "yes"
    if pool_cluster is None or None in on:
        return "unknown"
    return "no"


def label_of(ctx: ConformanceContext, urn: str | None) -> str:
    """A cluster's name for messages: its `name` input when known, else its resource name."""
    record = _index(ctx).by_urn.get(urn or "")
    if record is None:
        return "?"
    name = record.inputs.get("name")
    return name if isinstance(name, str) and name and not is_unknown(name) else record.name
