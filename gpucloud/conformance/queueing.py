"""Queueing check: would Kueue ever admit the plan's queued workloads?

A workload submitted to Kueue carries the label `kueue.x-k8s.io/queue-name` and is created suspended; only Kueue
unsuspends it, once the ClusterQueue behind that LocalQueue reserves quota for every pod of the workload at once.
The "queueing" check reports, per queued workload of the plan:

- a queue name with no LocalQueue of that name in the workload's namespace (when the plan creates the namespace's
  queues or any Kueue object), or a LocalQueue whose ClusterQueue the plan does not have: Kueue never admits it;
- a ClusterQueue whose most generous flavour (nominalQuota + borrowingLimit) holds fewer of a resource than the
  whole workload asks for: all-or-nothing admission never happens;
- a resource the workload requests that no resource group of the ClusterQueue covers (and Kueue's
  excludeResourcePrefixes does not drop): Kueue marks it inadmissible.

Sources: the kueue.x-k8s.io/v1beta2 CRD field descriptions of chart kueue@0.19.2 (ClusterQueue.spec.resourceGroups,
nominalQuota, borrowingLimit; LocalQueue.spec.clusterQueue) and the chart's manager configuration.
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import KObject, objects, pod_sets
from gpucloud.conformance.kube import fmt_quantity, pod_requests, quantity

CHECK = "queueing"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP = "kueue.x-k8s.io"
SOURCE = "Kueue 0.19 API (kueue.x-k8s.io/v1beta2 ClusterQueue/LocalQueue CRDs, chart kueue@0.19.2)"
# Resources every pod requests implicitly or that Kueue never accounts (pods is only counted when covered).
_ALWAYS_IGNORED = ("pods",)


def _kueue(objs: list[KObject], kind: str) -> list[KObject]:
    return [o for o in objs if o.kind == kind and o.api_version.startswith(f"{GROUP}/")]


def _excluded_prefixes(objs: list[KObject]) -> list[str] | None:
    """resources.excludeResourcePrefixes of the Kueue manager configuration the plan renders; None when the plan
    renders none (Kueue is configured elsewhere, e.g. by the platform stack of a team stack)."""
    for o in objs:
        if o.kind != "ConfigMap" or not o.name.endswith("manager-config"):
            continue
        text = (o.manifest.get("data") or {}).get("controller_manager_config.yaml")
        if not isinstance(text, str):
            continue
        try:
            config = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if isinstance(config, dict) and config.get("apiVersion", "").startswith("config.kueue.x-k8s.io/"):
            return [str(p) for p in ((config.get("resources") or {}).get("excludeResourcePrefixes") or [])]
    return None


def _needs(obj: KObject) -> dict[str, float] | None:
    """The workload's total requests over all its pods (Kueue reserves them together); None when unknown."""
    total: dict[str, float] = {}
    for ps in pod_sets(obj):
        if ps.count is None:
            return None
        for res, q in pod_requests(ps.pod_spec).items():
            if q is None:
                return None
            total[res] = total.get(res, 0.0) + q * ps.count
    return total


def _capacity(cq: KObject) -> tuple[dict[str, float | None], set[str]]:
    """Per resource, the most one flavour can give a workload (None: unbounded borrowing), and covered resources."""
    best: dict[str, float | None] = {}
    covered: set[str] = set()
    for group in cq.spec.get("resourceGroups") or []:
        if not isinstance(group, dict):
            continue
        covered.update(str(r) for r in group.get("coveredResources") or [])
        for flavor in group.get("flavors") or []:
            for res in (flavor or {}).get("resources") or []:
                name = str(res.get("name"))
                nominal = quantity(res.get("nominalQuota")) or 0.0
                if "borrowingLimit" not in res or res.get("borrowingLimit") is None:
                    # Without a limit the queue may borrow whatever the cohort has idle: unknown here.
                    limit: float | None = None if cq.spec.get("cohortName") else nominal
                else:
                    borrow = quantity(res.get("borrowingLimit"))
                    limit = None if borrow is None else nominal + borrow
                if name in best and (best[name] is None or limit is None):
                    best[name] = None
                else:
                    best[name] = max(best.get(name) or 0.0, limit) if limit is not None else None
    return best, covered


@register_check(CHECK)
def check_queueing(ctx: ConformanceContext) -> Iterator[Finding]:
    objs = objects(ctx)
    local = {(o.namespace, o.name): o for o in _kueue(objs, "LocalQueue")}
    cluster = {o.name: o for o in _kueue(objs, "ClusterQueue")}
    any_kueue = bool(local or cluster)
    excluded = _excluded_prefixes(objs)
    for obj in objs:
        queue = (obj.metadata.get("labels") or {}).get(QUEUE_LABEL)
        if not isinstance(queue, str) or not queue or obj.api_version.startswith(f"{GROUP}/"):
            continue
        ref = obj.ref
        lq = local.get((obj.namespace, queue))
        if lq is None:
            if any_kueue:
                queues = sorted(n for ns, n in local if ns == obj.namespace) or ["none"]
                yield Finding(
                    CHECK,
                    "error",
                    obj.urn,
                    f"metadata.labels.{QUEUE_LABEL}",
                    f"{obj.kind} {obj.namespace}/{obj.name} is submitted to LocalQueue {queue!r}, which this plan "
                    f"does not create in namespace {obj.namespace} (its LocalQueues: {', '.join(queues)}): Kueue "
                    "never admits it and it stays suspended",
                    f"a LocalQueue {obj.namespace}/{queue}",
                    SOURCE,
                    ref,
                )
            continue
        cq_name = str(lq.spec.get("clusterQueue") or "")
        cq = cluster.get(cq_name)
        if cq is None:
            continue  # a ClusterQueue created elsewhere (the platform's): cannot judge its quota here
        needs = _needs(obj)
        if needs is None:
            continue
        best, covered = _capacity(cq)
        for res, amount in sorted(needs.items()):
            if amount <= 0 or res in _ALWAYS_IGNORED or any(res.startswith(p) for p in excluded or []):
                continue
            if res not in covered and excluded is not None:
                yield Finding(
                    CHECK,
                    "error",
                    obj.urn,
                    "spec",
                    f"{obj.kind} {obj.namespace}/{obj.name} requests {res}, which no resource group of ClusterQueue "
                    f"{cq_name} covers: Kueue marks the workload inadmissible",
                    f"{res} in a coveredResources list of ClusterQueue {cq_name}, or its prefix in the Kueue "
                    "configuration's resources.excludeResourcePrefixes",
                    SOURCE,
                    ref,
                )
                continue
            if res not in covered:
                continue  # Kueue's configuration is elsewhere: it may exclude the resource
            limit = best.get(res)
            if limit is not None and amount > limit:
                yield Finding(
                    CHECK,
                    "error",
                    obj.urn,
                    "spec",
                    f"{obj.kind} {obj.namespace}/{obj.name} needs {fmt_quantity(res, amount)} of {res} at once "
                    f"(all its pods), but ClusterQueue {cq_name} can give at most {fmt_quantity(res, limit)} "
                    "(nominalQuota + borrowingLimit of its largest flavour): Kueue never admits it",
                    f"nominalQuota + borrowingLimit >= {fmt_quantity(res, amount)} for {res} in one flavour",
                    SOURCE,
                    ref,
                )
