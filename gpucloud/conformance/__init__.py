"""Conformance: does the plan hold against upstream, not only against gpucloud's own expectations?

Each check reads the recorded plan (and the objects other checks derive from it, such as the manifests that the
pinned Helm charts render) and reports findings that name the resource, the field, what upstream expects and the
source of that expectation (chart@version, CRD, Kubernetes OpenAPI version, provider input type, botocore model).
Checks run in registration order; a check that derives objects (Helm rendering) runs before the checks that read
them (schema, scheduling). A finding of severity "error" means `helm install`, the API server, the provider or the
scheduler would reject or strand what the plan describes: `gpucloud plan` exits with EXIT_CONFORMANCE.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from gpucloud.fleet import types as T
from gpucloud.plan.model import Plan

Severity = Literal["error", "warning"]
# A plan without an EKS cluster (a team stack on the platform's cluster) is checked at the shipped stacks' minor.
DEFAULT_KUBERNETES_VERSION = "1.35"
EKS_CLUSTER_TYPE = T.EKS_CLUSTER


@dataclass(frozen=True)
class Finding:
    """One way the plan departs from what upstream accepts or needs."""

    check: str  # stable id of the check, e.g. "helm.values", "k8s.schema", "scheduling.daemonset"
    severity: Severity
    urn: str  # the plan resource at fault (for a rendered object: the Release or Chart that renders it)
    field: str  # path of the offending value ("values.node-feature-discovery.worker", "spec.template...")
    message: str  # what is wrong
    expected: str  # what upstream expects instead
    source: str  # where that expectation comes from: "chart nvidia-device-plugin@0.18.2", "Kubernetes 1.34 OpenAPI"
    object: str | None = None  # a derived object's "apiVersion/kind namespace/name", when the fault is in one

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "urn": self.urn,
            "object": self.object,
            "field": self.field,
            "message": self.message,
            "expected": self.expected,
            "source": self.source,
        }


@dataclass
class DerivedObject:
    """A Kubernetes object the plan implies but does not register itself: rendered by a chart, a kustomization."""

    owner: str  # URN of the resource that creates it (helm.v3.Release, helm.v3.Chart, yaml.v2.ConfigFile)
    source: str  # "chart karpenter@1.12.1"
    manifest: dict[str, Any]

    @property
    def api_version(self) -> str:
        return str(self.manifest.get("apiVersion", ""))

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", ""))

    @property
    def namespace(self) -> str | None:
        ns = (self.manifest.get("metadata") or {}).get("namespace")
        return str(ns) if ns else None

    @property
    def name(self) -> str:
        return str((self.manifest.get("metadata") or {}).get("name", ""))

    @property
    def ref(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.api_version}/{self.kind} {where}"

    def summary(self) -> dict[str, Any]:
        return {"owner": self.owner, "source": self.source, "object": self.ref}


@dataclass
class ConformanceContext:
    """What every check reads: the plan, the objects derived from it so far, and the target Kubernetes version."""

    plan: Plan
    derived: list[DerivedObject] = field(default_factory=list)
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    # Free-form facts one check leaves for later ones (e.g. the rendered chart coordinates).
    facts: dict[str, Any] = field(default_factory=dict)


Check = Callable[[ConformanceContext], Iterable[Finding]]


@dataclass
class ConformanceResult:
    findings: list[Finding]
    derived: list[DerivedObject]
    checks: list[str]
    kubernetes_version: str
    timings: dict[str, float] = field(default_factory=dict)
    # Per workload, the pools it can land on; per pool, what its nodes advertise (from the scheduling check).
    placements: list[dict[str, Any]] = field(default_factory=list)
    pools: list[dict[str, Any]] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def to_json(self) -> dict[str, Any]:
        return {
            "kubernetes_version": self.kubernetes_version,
            "checks": list(self.checks),
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_json() for f in self.findings],
            "derived_objects": [d.summary() for d in self.derived],
            "placements": [
                {
                    "workload": p.get("workload"),
                    "object": p.get("object"),
                    "urn": p.get("urn"),
                    "pods": p.get("pods"),
                    "pools": [q.get("pool") for q in p.get("pools") or []],
                    **({"note": p["note"]} if p.get("note") else {}),
                }
                for p in self.placements
            ],
            "pools": [
                {k: p.get(k) for k in ("pool", "kind", "urn", "instance_types", "min", "max", "advertises")}
                for p in self.pools
            ],
        }


_CHECKS: list[tuple[str, Check]] = []


def register_check(name: str) -> Callable[[Check], Check]:
    """Register a check under a stable name; checks run in the order their modules register them."""

    def deco(fn: Check) -> Check:
        if any(n == name for n, _ in _CHECKS):
            raise ValueError(f"conformance check {name!r} registered twice")
        _CHECKS.append((name, fn))
        return fn

    return deco


def registered_checks() -> list[str]:
    _load_builtin_checks()
    return [n for n, _ in _CHECKS]


def _load_builtin_checks() -> None:
    # Imported for their registrations, in the order they must run: derivation first, then readers.
    from gpucloud.conformance import builtin

    # A module imported on its own before builtin (a test importing one check) registers early; the run order is
    # builtin's, whatever the import order was (checks outside it keep their place after the built-in ones).
    order = {f"gpucloud.conformance.{m}": i for i, m in enumerate(builtin.RUN_ORDER)}

    def rank(entry: tuple[str, Check]) -> int:
        module = str(getattr(entry[1], "__module__", ""))
        return min((i for m, i in order.items() if module == m or module.startswith(m + ".")), default=len(order))

    _CHECKS.sort(key=rank)


def kubernetes_version(plan: Plan) -> str:
    """The cluster's Kubernetes minor version from the plan's EKS cluster (the default when none or unknown)."""
    for r in plan.of_type(EKS_CLUSTER_TYPE):
        version = r.inputs.get("version")
        if isinstance(version, str) and version.count(".") >= 1 and version.replace(".", "").isdigit():
            return ".".join(version.split(".")[:2])
    return DEFAULT_KUBERNETES_VERSION


def run_conformance(
    plan: Plan,
    *,
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
    base_kubernetes_version: str | None = None,
) -> ConformanceResult:
    """Run every registered check (or those in `only`) on the plan and collect their findings, sorted.

    `base_kubernetes_version`: the control plane's minor in the base plan (`--compare`), for the upgrade checks.
    """
    _load_builtin_checks()
    from gpucloud.conformance.stack_options import validate

    validate(plan)
    wanted = set(only) if only is not None else None
    skipped = set(skip)
    ctx = ConformanceContext(plan=plan, kubernetes_version=kubernetes_version(plan))
    if base_kubernetes_version:
        ctx.facts["upgrade.base_kubernetes_version"] = base_kubernetes_version
    findings: list[Finding] = []
    ran: list[str] = []
    timings: dict[str, float] = {}
    for name, fn in _CHECKS:
        if (wanted is not None and name not in wanted) or name in skipped:
            continue
        start = time.perf_counter()
        findings.extend(fn(ctx))
        timings[name] = time.perf_counter() - start
        ran.append(name)
    findings = sorted(set(findings), key=_finding_order)
    return ConformanceResult(
        findings,
        ctx.derived,
        ran,
        ctx.kubernetes_version,
        timings,
        placements=list(ctx.facts.get("placements") or []),
        pools=list(ctx.facts.get("scheduling_pools") or []),
    )


def _finding_order(f: Finding) -> tuple[int, str, str, str, str]:
    return (0 if f.severity == "error" else 1, f.check, f.urn, f.object or "", f.field)


__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "Check",
    "ConformanceContext",
    "ConformanceResult",
    "DerivedObject",
    "Finding",
    "kubernetes_version",
    "register_check",
    "registered_checks",
    "run_conformance",
]
