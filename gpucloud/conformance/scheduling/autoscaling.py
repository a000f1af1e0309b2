"""Autoscaling: a pool no autoscaler can grow (cluster-autoscaler auto-discovery and scale-from-zero tags, max
size 0, a Karpenter NodePool without controller or EC2NodeClass) and the priority expander's configuration."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import yaml

from gpucloud.conformance import ConformanceContext, Finding
from gpucloud.conformance.inventory import (
    VENDOR_CHARTS,
    command_words,
    containers,
    objects,
    releases,
)
from gpucloud.conformance.node_agents import (
    CLUSTER_AUTOSCALER,
    KARPENTER,
    AgentSet,
)
from gpucloud.conformance.nodes import (
    EFA,
    EKS_CLUSTER,
    NEURON,
    Pool,
    build_pools,
    cluster_name,
)
from gpucloud.conformance.scheduling.common import CA_DOCS, CHECK
from gpucloud.conformance.scheduling.workloads import Workload, workloads
from gpucloud.plan.model import is_unknown


def ca_discovery(ctx: ConformanceContext, aset: AgentSet) -> tuple[list[list[str]], list[str], str] | None:
    """cluster-autoscaler's ASG discovery: (tag sets, explicit --nodes names, source), or None without CA."""
    for a in aset.of(CLUSTER_AUTOSCALER):
        tag_sets: list[list[str]] = []
        names: list[str] = []
        for c in containers(a.pod.pod_spec):
            for w in command_words(c):
                if w.startswith("--node-group-auto-discovery=asg:tag="):
                    tag_sets.append(w.split("=", 2)[2].split(","))
                elif w.startswith("--nodes="):
                    names.append(w.split(":", 2)[-1])
        return tag_sets, names, f"{a.source} Deployment args; {CA_DOCS}"
    for r in releases(ctx, "cluster-autoscaler"):
        values = r.inputs.get("values") or {}
        name = (values.get("autoDiscovery") or {}).get("clusterName")
        tags = (values.get("autoDiscovery") or {}).get("tags")
        chart_values = VENDOR_CHARTS / f"cluster-autoscaler-{r.inputs.get('version')}" / "values.yaml"
        if tags is None and chart_values.is_file():
            tags = ((yaml.safe_load(chart_values.read_text()) or {}).get("autoDiscovery") or {}).get("tags")
        tags = tags or [
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/{{ .Values.autoDiscovery.clusterName }}",
        ]
        if not name or is_unknown(name):
            return [], [], f"chart cluster-autoscaler@{r.inputs.get('version')} values; {CA_DOCS}"
        resolved = [str(t).replace("{{ .Values.autoDiscovery.clusterName }}", str(name)) for t in tags]
        return (
            [resolved],
            [],
            f"chart cluster-autoscaler@{r.inputs.get('version')} values.yaml autoDiscovery.tags; {CA_DOCS}",
        )
    return None


def _selected_keys(ws: Iterable[Workload]) -> set[str]:
    keys: set[str] = set()
    for w in ws:
        keys |= set((w.pod_spec.get("nodeSelector") or {}).keys())
        for t in ((w.pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution", {}
        ).get("nodeSelectorTerms") or []:
            keys |= {str(e.get("key")) for e in t.get("matchExpressions") or []}
    return keys


def _autoscaling_findings(ctx: ConformanceContext, aset: AgentSet) -> Iterator[Finding]:
    pools = build_pools(ctx)
    ca = ca_discovery(ctx, aset)
    karpenter = bool(aset.of(KARPENTER)) or bool(releases(ctx, "karpenter"))
    placements = ctx.facts.get("placements") or []
    wl = workloads(ctx)
    by_pool: dict[str, list[Workload]] = {}
    for w, p in zip(wl, placements, strict=False):
        for pl in p.get("pools", []):
            by_pool.setdefault(pl["urn"], []).append(w)
    cluster = cluster_name(ctx)
    # Add-ons of a cluster this plan does not create live in another stack: their absence here proves nothing.
    cluster_in_plan = bool(ctx.plan.of_type(EKS_CLUSTER))
    for pool in pools:
        obj_ref = pool.obj_ref
        if pool.max_size == 0:
            yield Finding(
                f"{CHECK}.autoscaling",
                "error",
                pool.urn,
                "limits" if pool.kind == "Karpenter NodePool" else "maxSize",
                f"{pool.kind} {pool.name} can never have a node: its maximum size is 0",
                "a maximum of at least one node",
                "EC2 Auto Scaling / EKS node group scaling config; Karpenter NodePool limits",
                object=obj_ref,
            )
            continue
        if pool.kind == "Karpenter NodePool":
            if not karpenter and cluster_in_plan:
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "error",
                    pool.urn,
                    "spec",
                    f"Karpenter NodePool {pool.name} is in the plan but no Karpenter controller is: nothing launches "
                    "its nodes",
                    "the Karpenter chart (controller Deployment) installed in the cluster",
                    "Karpenter NodePool API (karpenter.sh/v1)",
                    object=obj_ref,
                )
            if pool.node_class is None:
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "error",
                    pool.urn,
                    "spec.template.spec.nodeClassRef",
                    f"Karpenter NodePool {pool.name} references an EC2NodeClass the plan does not create: Karpenter "
                    "never launches its nodes",
                    "an EC2NodeClass (karpenter.k8s.aws/v1) with the referenced name",
                    "Karpenter NodePool API (karpenter.sh/v1 nodeClassRef)",
                    object=obj_ref,
                )
            continue
        if pool.kind != "self-managed ASG":
            if (
                ca is None
                and not karpenter
                and cluster_in_plan
                and (pool.min_size or 0) < (pool.max_size or 0)
                and pool.accelerated
            ):
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "warning",
                    pool.urn,
                    "scalingConfig",
                    f"{pool.kind} {pool.name} may scale to {pool.max_size} nodes but the plan installs no "
                    "cluster-autoscaler: it stays at its desired size",
                    "cluster-autoscaler (EKS tags managed node groups for its auto-discovery)",
                    CA_DOCS,
                )
            continue
        if ca is None:
            if cluster_in_plan and (pool.max_size or 0) > (pool.min_size or 0):
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "error" if (pool.min_size or 0) == 0 else "warning",
                    pool.urn,
                    "tags",
                    f"no autoscaler in the plan can grow self-managed ASG {pool.name} (min {pool.min_size}, max "
                    f"{pool.max_size}): Karpenter does not manage Auto Scaling groups and cluster-autoscaler is not "
                    "installed",
                    "cluster-autoscaler with auto-discovery of this ASG",
                    CA_DOCS,
                )
            continue
        tag_sets, names, source = ca
        discovered = pool.name in names or any(all(_has_tag(pool.tags, t) for t in ts) for ts in tag_sets)
        # A tag whose key is only known after deploy may be the discovery tag: nothing to prove then.
        unknown_keys = any(k.startswith("<unknown:") for k in pool.tags)
        if not discovered and not unknown_keys:
            wanted = (
                tag_sets[0]
                if tag_sets
                else ["k8s.io/cluster-autoscaler/enabled", f"k8s.io/cluster-autoscaler/{cluster}"]
            )
            missing = [t for t in wanted if not _has_tag(pool.tags, t)]
            yield Finding(
                f"{CHECK}.autoscaling",
                "error",
                pool.urn,
                "tags",
                f"cluster-autoscaler never discovers self-managed ASG {pool.name}: it lacks the auto-discovery "
                f"tag(s) {missing}, so pods waiting for it stay Pending",
                f"ASG tags {', '.join(t if '=' in t else t + ' (any value)' for t in wanted)}",
                source,
            )
        if pool.min_size == 0:
            yield from _scale_from_zero(ctx, pool, by_pool.get(pool.urn, []))


def _expander_findings(ctx: ConformanceContext, aset: AgentSet) -> Iterator[Finding]:
    """cluster-autoscaler's priority expander vs the node groups of one pool (same labels, capacity types)."""
    words: list[str] = []
    namespace = "kube-system"
    for a in aset.of(CLUSTER_AUTOSCALER):
        namespace = a.obj.namespace
        for c in containers(a.pod.pod_spec):
            words += command_words(c)
    for r in releases(ctx, "cluster-autoscaler"):
        expander = ((r.inputs.get("values") or {}).get("extraArgs") or {}).get("expander")
        if expander:
            words.append(f"--expander={expander}")
        namespace = str(r.inputs.get("namespace") or namespace)
    if not any(w.startswith("--expander=") and "priority" in w.split("=", 1)[1].split(",") for w in words):
        return
    cms = [
        o
        for o in objects(ctx)
        if o.kind == "ConfigMap" and o.name == "cluster-autoscaler-priority-expander" and o.namespace == namespace
    ]
    if not cms:
        yield Finding(
            f"{CHECK}.autoscaling",
            "warning",
            (
                aset.of(CLUSTER_AUTOSCALER)[0].obj.urn
                if aset.of(CLUSTER_AUTOSCALER)
                else releases(ctx, "cluster-autoscaler")[0].urn
            ),
            "--expander",
            f"cluster-autoscaler uses the priority expander but {namespace} has no ConfigMap "
            "cluster-autoscaler-priority-expander: it falls back to random choice",
            f"ConfigMap {namespace}/cluster-autoscaler-priority-expander with data.priorities",
            "cluster-autoscaler priority expander docs (expander/priority/readme.md)",
        )
        return
    cm = cms[0]
    try:
        prios = yaml.safe_load(str((cm.manifest.get("data") or {}).get("priorities") or "")) or {}
    except yaml.YAMLError:
        return
    if not isinstance(prios, dict):
        return

    def priority(group: str) -> int | None:
        best = None
        for prio, regexes in prios.items():
            for rx in regexes if isinstance(regexes, list) else [regexes]:
                try:
                    hit = re.search(str(rx), group)
                except re.error:
                    continue
                if hit and (best is None or int(prio) > best):
                    best = int(prio)
        return best

    families: dict[tuple[Any, ...], list[Pool]] = {}
    for pool in build_pools(ctx):
        if pool.kind != "managed node group" or not pool.variants:
            continue
        labels = {
            k: v
            for k, v in pool.variants[0].labels.values.items()
            if "capacity" not in k.lower() and k not in ("eks.amazonaws.com/nodegroup", "topology.kubernetes.io/zone")
        }
        key = (tuple(sorted((k, tuple(sorted(v)) if v else None) for k, v in labels.items())), tuple(pool.taints))
        families.setdefault(key, []).append(pool)
    for members in families.values():
        caps = {
            p.urn: next(iter(p.variants[0].labels.values.get("eks.amazonaws.com/capacityType") or {""}))
            for p in members
        }
        on_demand = [p for p in members if caps[p.urn] == "ON_DEMAND"]
        spot = [p for p in members if caps[p.urn] == "SPOT"]
        for od in on_demand:
            for sp in spot:
                po, ps_ = priority(f"eks-{od.name}-0"), priority(f"eks-{sp.name}-0")
                if po is None or ps_ is None or ps_ <= po or (od.min_size or 0) > 0:
                    continue
                yield Finding(
                    f"{CHECK}.autoscaling",
                    "warning",
                    cm.urn,
                    "data.priorities",
                    f"the priority expander ranks spot node group {sp.name} ({ps_}) above its on-demand twin {od.name} "
                    f"({po}) and the on-demand group has min size 0: on-demand capacity is neither a floor nor "
                    "preferred, so scale-ups go to spot",
                    "on-demand groups ranked above spot, or an on-demand min size for the base capacity",
                    "cluster-autoscaler priority expander docs (highest priority group that can fit wins)",
                    object=cm.ref,
                )


def _has_tag(tags: Mapping[str, str], spec: str) -> bool:
    key, _, value = spec.partition("=")
    return key in tags and (not value or tags[key] == value)


def _scale_from_zero(ctx: ConformanceContext, pool: Pool, ws: list[Workload]) -> Iterator[Finding]:
    prefix = "k8s.io/cluster-autoscaler/node-template/"
    missing: list[str] = []
    selected = _selected_keys(ws)
    if pool.variants and pool.variants[0].labels.open:
        if not any(k.startswith(prefix) for k in pool.tags):
            yield Finding(
                f"{CHECK}.autoscaling",
                "warning",
                pool.urn,
                "tags",
                f"self-managed ASG {pool.name} scales from zero, its node labels and taints come from user data "
                "only known after deploy, and it carries no node-template tags: cluster-autoscaler builds its "
                "template node without those labels and taints",
                f"{prefix}label/<key> and {prefix}taint/<key> tags for every label and taint the nodes register",
                CA_DOCS,
            )
        return
    for key, value in pool.registered_labels.items():
        if key in selected or not ws:
            tag = f"{prefix}label/{key}"
            if pool.tags.get(tag) != value:
                missing.append(f"{tag}={value}")
    for t in pool.taints:
        tag = f"{prefix}taint/{t.key}"
        if pool.tags.get(tag) != f"{t.value}:{t.effect}":
            missing.append(f"{tag}={t.value}:{t.effect}")
    for w in ws:
        for res in (EFA, NEURON):
            if (w.requests.get(res) or 0) > 0 and f"{prefix}resources/{res}" not in pool.tags:
                missing.append(f"{prefix}resources/{res}")
    if missing:
        yield Finding(
            f"{CHECK}.autoscaling",
            "error",
            pool.urn,
            "tags",
            f"self-managed ASG {pool.name} scales from zero but lacks node-template tags {sorted(set(missing))}: "
            "with no node to copy, cluster-autoscaler's template node has none of these labels, taints or "
            "resources, so it never scales the group up for pods that select, tolerate or request them",
            "ASG tags " + ", ".join(sorted(set(missing))),
            CA_DOCS,
        )
