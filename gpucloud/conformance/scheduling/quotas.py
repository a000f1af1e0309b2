"""ResourceQuota and LimitRange: a quota or a LimitRange that rejects a namespace's workloads, and a LimitRange
`max` without `default` (the API server defaults `default` to `max`)."""

from __future__ import annotations

from collections.abc import Iterator

from gpucloud.conformance import ConformanceContext, Finding
from gpucloud.conformance.inventory import (
    PodSet,
    containers,
    objects,
    pod_sets,
)
from gpucloud.conformance.kube import (
    apply_limit_range,
    fmt_quantity,
    limit_range_violations,
    quantity,
)
from gpucloud.conformance.scheduling.common import CHECK, DEVICE_RESOURCES, LIMITRANGE_DOCS, QUOTA_DOCS, _finding
from gpucloud.conformance.scheduling.workloads import Workload, _limit_items, workloads


def _quota_usage(w: Workload, key: str) -> float | None:
    """What one pod of the workload counts against a ResourceQuota hard key."""
    if key == "pods":
        return 1.0
    if key.startswith("count/"):
        return None
    if key.startswith("limits."):
        res = key[len("limits.") :]
        total: float | None = 0.0
        for c in w.pod_spec.get("containers") or []:
            q = quantity(((c.get("resources") or {}).get("limits") or {}).get(res))
            total = (
                None
                if total is None or (q is None and res in ((c.get("resources") or {}).get("limits") or {}))
                else (total + (q or 0))
            )
        return total
    res = key[len("requests.") :] if key.startswith("requests.") else key
    return w.requests.get(res, 0.0)


def _quota_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    objs = objects(ctx)
    source = QUOTA_DOCS.format(v=ctx.kubernetes_version)
    by_ns: dict[str, list[Workload]] = {}
    for w in workloads(ctx):
        by_ns.setdefault(w.ps.obj.namespace, []).append(w)
    for q in objs:
        if q.kind != "ResourceQuota" or not isinstance(q.spec.get("hard") or {}, dict):
            continue
        ws = by_ns.get(q.namespace, [])
        for key, hard_raw in (q.spec.get("hard") or {}).items():
            hard = quantity(hard_raw)
            if hard is None:
                continue
            res = key.split(".", 1)[1] if key.startswith(("requests.", "limits.")) else key
            if res in ("cpu", "memory"):
                for w in ws:
                    where = "limits" if key.startswith("limits.") else "requests"
                    missing = [
                        c.get("name", "?")
                        for c in w.pod_spec.get("containers") or []
                        if res not in ((c.get("resources") or {}).get(where) or {})
                    ]
                    if missing:
                        yield _finding(
                            f"{CHECK}.quota",
                            "error",
                            q if q.derived else None,
                            q.urn,
                            f"spec.hard.{key}",
                            f"ResourceQuota {q.namespace}/{q.name} caps {key}, so the API server rejects pods of "
                            f"{w.ps.name} whose containers {missing} set no {where}.{res} (no LimitRange default "
                            "fills it)",
                            f"every container sets {where}.{res}, or a LimitRange in {q.namespace} defaults it",
                            source,
                        )
            at_min: float | None = 0.0
            at_max: float | None = 0.0
            parts = []
            for w in ws:
                per = _quota_usage(w, key)
                if per is None or w.ps.count is None:
                    at_min = at_max = None
                    break
                if per > hard:
                    yield _finding(
                        f"{CHECK}.quota",
                        "error",
                        q if q.derived else None,
                        q.urn,
                        f"spec.hard.{key}",
                        f"ResourceQuota {q.namespace}/{q.name} allows {key}={hard_raw}, but one pod of {w.ps.name} "
                        f"needs {fmt_quantity(res, per)}: every such pod is rejected (exceeded quota)",
                        f"hard {key} >= {fmt_quantity(res, per)}",
                        source,
                    )
                if per:
                    parts.append(f"{w.ps.name}: {w.ps.count} x {fmt_quantity(res, per)}")
                assert at_min is not None and at_max is not None
                at_min += per * w.ps.count
                at_max += per * (w.ps.max_count or w.ps.count)
            if at_min is None or at_max is None:
                continue
            if at_min > hard:
                yield _finding(
                    f"{CHECK}.quota",
                    "error",
                    q if q.derived else None,
                    q.urn,
                    f"spec.hard.{key}",
                    f"the workloads of namespace {q.namespace} need {key}={fmt_quantity(res, at_min)} together "
                    f"({'; '.join(parts)}) but ResourceQuota {q.name} allows {hard_raw}: the last pods are rejected "
                    "(exceeded quota) and their workload never completes",
                    f"hard {key} >= {fmt_quantity(res, at_min)}",
                    source,
                )
            elif at_max > hard:
                yield _finding(
                    f"{CHECK}.quota",
                    "warning",
                    q if q.derived else None,
                    q.urn,
                    f"spec.hard.{key}",
                    f"at their autoscalers' maximum the workloads of namespace {q.namespace} need "
                    f"{key}={fmt_quantity(res, at_max)} but ResourceQuota {q.name} allows {hard_raw}: scale-out stops "
                    "short of the maximum",
                    f"hard {key} >= {fmt_quantity(res, at_max)}",
                    source,
                )


def _limitrange_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    objs = objects(ctx)
    source = LIMITRANGE_DOCS.format(v=ctx.kubernetes_version)
    by_ns: dict[str, list[PodSet]] = {}
    for o in objs:
        if o.kind == "DaemonSet":
            continue
        for ps in pod_sets(o):
            by_ns.setdefault(o.namespace, []).append(ps)
    for ns, items in _limit_items(objs).items():
        for lr, i, item in items:
            for res in item.max_from:
                affected = sorted(
                    {
                        f"{ps.name} container {c.get('name', '?')}"
                        for ps in by_ns.get(ns, [])
                        for c in containers(ps.pod_spec)
                        if res not in ((c.get("resources") or {}).get("limits") or {})
                    }
                )
                device = res in DEVICE_RESOURCES or "/" in res
                yield _finding(
                    f"{CHECK}.limitrange",
                    "error" if device else "warning",
                    lr if lr.derived else None,
                    lr.urn,
                    f"spec.limits[{i}].max.{res}",
                    f"LimitRange {ns}/{lr.name} sets max {res}={item.max[res]} without default: the API server "
                    f"defaults `default` (and `defaultRequest`) to the max, so every container in {ns} that does not "
                    f"set {res} gets {res}={item.max[res]}"
                    + (f" ({'; '.join(affected)})" if affected else "")
                    + (": CPU-only pods then wait for accelerators and use up the quota" if device else ""),
                    f"spec.limits[{i}].default.{res} (and defaultRequest.{res}) set explicitly, e.g. 0",
                    source,
                )
            for ps in by_ns.get(ns, []):
                for c in containers(ps.pod_spec):
                    admitted, _ = apply_limit_range(c, item)
                    why = limit_range_violations(admitted, item)
                    if why:
                        yield _finding(
                            f"{CHECK}.limitrange",
                            "error",
                            ps.obj if ps.obj.derived else None,
                            ps.obj.urn,
                            f"{ps.path}.containers[{c.get('name', '?')}].resources",
                            f"LimitRange {ns}/{lr.name} rejects {ps.name}: container {c.get('name', '?')} "
                            + "; ".join(why),
                            f"within spec.limits[{i}] of LimitRange {lr.name}",
                            source,
                        )
