"""kube-scheduler and admission semantics the scheduling check evaluates, as pure functions over plain dicts.

Node affinity (In/NotIn/Exists/DoesNotExist/Gt/Lt), nodeSelector, taints and tolerations, quantities, a pod's
effective resource requests, and the LimitRange defaulting the API server applies. Node labels here are *sets of
possible values* because one pool launches several instance types, zones and capacity types; a node model may
also be *open* (labels only known after deploy), so every predicate answers yes, no or unknown (None).
Upstream semantics: Kubernetes 1.34 (k8s.io/component-helpers/scheduling/corev1/nodeaffinity,
k8s.io/api/core/v1 Toleration.ToleratesTaint, pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem,
plugin/pkg/admission/limitranger, k8s.io/component-helpers/resource PodRequests).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpucloud.fleet.model import Taint
from gpucloud.fleet.values import quantity as quantity
from gpucloud.plan.model import is_unknown

Tri = bool | None  # True: certainly; False: certainly not; None: cannot tell before deploy


def tri_and(values: Iterable[Tri]) -> Tri:
    out: Tri = True
    for v in values:
        if v is False:
            return False
        if v is None:
            out = None
    return out


def tri_or(values: Iterable[Tri]) -> Tri:
    out: Tri = False
    for v in values:
        if v is True:
            return True
        if v is None:
            out = None
    return out


@dataclass
class NodeLabels:
    """A node's labels as sets of possible values (None: any value); `open`: more labels may exist.

    `open_prefixes` are label namespaces some component writes more of than the model knows (NFD's
    feature.node.kubernetes.io/ kernel, CPU and USB labels): a key under one of them is unknown, not absent.
    """

    values: dict[str, frozenset[str] | None] = field(default_factory=dict)
    open: bool = False
    open_prefixes: frozenset[str] = frozenset()
    closed_prefixes: frozenset[str] = frozenset()  # modelled exactly even under an open prefix
    maybe: set[str] = field(default_factory=set)  # keys set only if a component runs that may not

    def has(self, key: str) -> Tri:
        if key in self.values:
            return None if key in self.maybe else True
        if self.open:
            return None
        if any(key.startswith(p) for p in self.open_prefixes) and not any(
            key.startswith(p) for p in self.closed_prefixes
        ):
            return None
        return False

    def copy(self) -> NodeLabels:
        return NodeLabels(dict(self.values), self.open, self.open_prefixes, self.closed_prefixes, set(self.maybe))

    def add(self, key: str, value: str | Iterable[str] | None) -> None:
        if value is None:
            self.values[key] = None
            return
        new = frozenset([value]) if isinstance(value, str) else frozenset(value)
        old = self.values.get(key, frozenset())
        self.values[key] = None if old is None else old | new


def match_requirement(labels: NodeLabels, req: Mapping[str, Any]) -> Tri:
    """One NodeSelectorRequirement against the possible labels of a node of the pool."""
    key = str(req.get("key", ""))
    op = str(req.get("operator", ""))
    wanted = [str(v) for v in (req.get("values") or []) if not is_unknown(v)]
    unknown_values = any(is_unknown(v) for v in (req.get("values") or []))
    present = labels.has(key)
    possible = labels.values.get(key)
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return None if present is None else not present
    if op == "In":
        if present is False:
            return False
        if possible is None:
            return None
        if not set(wanted) & possible:
            return None if unknown_values else False
        return True if present else None
    if op == "NotIn":
        if present is False:
            return True
        if possible is None or unknown_values:
            return None
        if possible - set(wanted):
            return True
        return None if present is None else False
    if op in ("Gt", "Lt"):
        if present is False:
            return False
        if possible is None or present is None or len(wanted) != 1:
            return None
        try:
            bound = int(wanted[0])
            nums = [int(v) for v in possible]
        except ValueError:
            return False  # the scheduler treats a non-integer label value as not matching
        return any(n > bound if op == "Gt" else n < bound for n in nums)
    return False  # unknown operator: the API server rejects it; nothing matches


def match_term(labels: NodeLabels, term: Mapping[str, Any]) -> Tri:
    """A NodeSelectorTerm: its requirements ANDed; a term with no requirements matches nothing."""
    exprs = list(term.get("matchExpressions") or [])
    fields = list(term.get("matchFields") or [])
    if not exprs and not fields:
        return False
    # matchFields only supports metadata.name: a specific node name is unknown before deploy.
    return tri_and([*(match_requirement(labels, e) for e in exprs), *(None for _ in fields)])


def required_node_affinity(pod_spec: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    node_aff = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not node_aff:
        return None
    return list(node_aff.get("nodeSelectorTerms") or [])


def selector_fits(labels: NodeLabels, pod_spec: Mapping[str, Any]) -> tuple[Tri, list[str]]:
    """nodeSelector AND required node affinity (terms ORed). Returns the verdict and why it fails."""
    reasons: list[str] = []
    verdicts: list[Tri] = []
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        v = match_requirement(labels, {"key": key, "operator": "In", "values": [value]})
        verdicts.append(v)
        if v is False:
            have = labels.values.get(key)
            reasons.append(
                f"nodeSelector {key}={value}: the node has no label {key}"
                if key not in labels.values
                else f"nodeSelector {key}={value}: the node's {key} is {_show(have)}"
            )
    terms = required_node_affinity(pod_spec)
    if terms is not None:
        results = [match_term(labels, t) for t in terms]
        v = tri_or(results)
        verdicts.append(v)
        if v is False:
            reasons.append("required node affinity: no term matches (" + "; ".join(_term_misses(labels, terms)) + ")")
    return tri_and(verdicts), reasons


def _term_misses(labels: NodeLabels, terms: list[Mapping[str, Any]]) -> list[str]:
    out = []
    for t in terms:
        for e in t.get("matchExpressions") or []:
            if match_requirement(labels, e) is False:
                key = e.get("key")
                have = "absent" if key not in labels.values else _show(labels.values.get(str(key)))
                values = [str(v) for v in e.get("values") or []]
                shown = values if len(values) <= 6 else [*values[:6], f"... {len(values) - 6} more"]
                out.append(f"{key} {e.get('operator')} {shown} (node: {have})")
                break
    return out


def _show(values: frozenset[str] | None) -> str:
    return "any value" if values is None else ",".join(sorted(values))


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """core/v1 Toleration.ToleratesTaint: effect empty matches all; empty key with Exists matches every key."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    op = toleration.get("operator") or "Equal"
    if key and key != taint.key:
        return False
    if op == "Exists":
        return True
    if not key:
        return False  # an empty key is only valid with Exists
    return str(toleration.get("value") or "") == taint.value


def untolerated(tolerations: Iterable[Mapping[str, Any]], taints: Iterable[Taint]) -> list[Taint]:
    """Taints that keep the pod off the node (NoSchedule, NoExecute); PreferNoSchedule only scores."""
    tols = [t for t in tolerations if isinstance(t, Mapping)]
    return [t for t in taints if t.effect in ("NoSchedule", "NoExecute") and not any(tolerates(x, t) for x in tols)]


# -- quantities and requests ---------------------------------------------------------------------------------


def container_requests(container: Mapping[str, Any]) -> dict[str, float | None]:
    """A container's requests; a resource with a limit and no request requests its limit (API defaulting)."""
    res = container.get("resources") or {}
    limits = res.get("limits") or {}
    requests = res.get("requests") or {}
    out: dict[str, float | None] = {k: quantity(v) for k, v in limits.items()}
    out.update({k: quantity(v) for k, v in requests.items()})
    return out


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, float | None]:
    """Effective pod requests: max(sum of app containers + sidecars, largest init container) + overhead."""
    total: dict[str, float | None] = {}
    sidecars: dict[str, float | None] = {}
    for c in pod_spec.get("containers") or []:
        _add(total, container_requests(c))
    init_peak: dict[str, float | None] = {}
    for c in pod_spec.get("initContainers") or []:
        req = container_requests(c)
        if c.get("restartPolicy") == "Always":
            # A sidecar keeps running next to the app containers.
            _add(sidecars, req)
            continue
        with_sidecars = dict(sidecars)
        _add(with_sidecars, req)
        for k, v in with_sidecars.items():
            init_peak[k] = _max(init_peak.get(k, 0.0), v)
    _add(total, sidecars)
    for k, v in init_peak.items():
        total[k] = _max(total.get(k, 0.0), v)
    _add(total, {k: quantity(v) for k, v in (pod_spec.get("overhead") or {}).items()})
    return total


def _add(into: dict[str, float | None], more: Mapping[str, float | None]) -> None:
    for k, v in more.items():
        cur = into.get(k, 0.0)
        into[k] = None if cur is None or v is None else cur + v


def _max(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else max(a, b)


def fmt_quantity(resource: str, value: float | None) -> str:
    if value is None:
        return "unknown"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        gib = value / 2**30
        return f"{gib:g}Gi" if gib >= 1 else f"{value / 2**20:g}Mi"
    if resource == "cpu":
        return f"{value:g}" if value >= 1 or value == 0 else f"{round(value * 1000)}m"
    return f"{value:g}"


# -- LimitRange ---------------------------------------------------------------------------------------------


@dataclass
class LimitRangeItem:
    """One `type: Container` item after the API server's defaulting (SetDefaults_LimitRangeItem)."""

    default: dict[str, Any]
    default_request: dict[str, Any]
    max: dict[str, Any]
    min: dict[str, Any]
    max_from: dict[str, str]  # resource -> "max": defaults that the API server copied from max/min


def defaulted_limit_range_item(item: Mapping[str, Any]) -> LimitRangeItem:
    """default <- max where unset; defaultRequest <- default, then <- min, where unset."""
    default = dict(item.get("default") or {})
    default_request = dict(item.get("defaultRequest") or {})
    mx = dict(item.get("max") or {})
    mn = dict(item.get("min") or {})
    copied: dict[str, str] = {}
    for k, v in mx.items():
        if k not in default:
            default[k] = v
            copied[k] = "max"
    for k, v in default.items():
        if k not in default_request:
            default_request[k] = v
    for k, v in mn.items():
        if k not in default_request:
            default_request[k] = v
    return LimitRangeItem(default, default_request, mx, mn, copied)


def apply_limit_range(container: Mapping[str, Any], item: LimitRangeItem) -> tuple[dict[str, Any], list[str]]:
    """LimitRanger admission on one container: fill unset limits/requests from the defaults; return the
    container as admitted and what was filled in from a default that the API server copied from `max`."""
    res = dict(container.get("resources") or {})
    limits = dict(res.get("limits") or {})
    # Pod defaulting runs before admission: a resource with a limit and no request already requests its limit.
    requests = {**limits, **(res.get("requests") or {})}
    filled: list[str] = []
    for k, v in item.default.items():
        if k not in limits:
            limits[k] = v
            if item.max_from.get(k) == "max":
                filled.append(k)
    for k, v in item.default_request.items():
        if k not in requests:
            requests[k] = v
    out = dict(container)
    out["resources"] = {"limits": limits, "requests": requests}
    return out, filled


def limit_range_violations(container: Mapping[str, Any], item: LimitRangeItem) -> list[str]:
    """What LimitRanger rejects: a request below min, a request or limit above max."""
    res = container.get("resources") or {}
    limits = res.get("limits") or {}
    requests = res.get("requests") or {}
    out: list[str] = []
    for k, mx in item.max.items():
        m = quantity(mx)
        for what, src in (("limit", limits), ("request", requests)):
            q = quantity(src.get(k))
            if m is not None and q is not None and q > m:
                out.append(f"{what} {k}={src.get(k)} exceeds the LimitRange max {mx}")
    for k, mn in item.min.items():
        m = quantity(mn)
        q = quantity(requests.get(k))
        if m is not None and q is not None and q < m:
            out.append(f"request {k}={requests.get(k)} is below the LimitRange min {mn}")
    return out


def ceil_div(a: float, b: float) -> int:
    return math.ceil(a / b - 1e-9)
