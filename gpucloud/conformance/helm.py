"""Helm conformance: every chart the plan installs is pinned, reads the values it is given, and renders.

For each `helm.sh/v3` Release (and `helm.sh/v4` Chart) in the plan this check

- matches chart, version and repository against the charts lock (gpucloud/charts/lock.yaml);
- compares the planned values with what the chart reads (gpucloud.charts.values: defaults + template references,
  alias-aware, sub-charts included), because no pinned chart ships a values.schema.json and Helm drops unknown
  keys without a word;
- renders the vendored chart with the real `helm template` (CRDs included), the release's name, namespace and
  values, and the cluster's Kubernetes version; values known only after `up` get typed placeholders;
- reports a template failure (`required`, `fail`) with Helm's own message, and a chart whose templates define a
  workload but whose render has none (cluster-autoscaler without auto-discovery);
- adds every rendered object to `ctx.derived`, namespaced as `helm install` would, for the schema and scheduling
  checks and the policy pack.

Renders run concurrently and go through the on-disk cache of `gpucloud.charts.helm.render_pinned`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpucloud.charts.helm import HelmError, Rendered, find_helm, render_pinned
from gpucloud.charts.lock import LOCK_SOURCE, ChartPin, ChartsLock, LockError, load_lock
from gpucloud.charts.values import (
    WORKLOAD_KINDS,
    cached_model,
    chart_defaults_for_pin,
    fill_unknowns,
    model_for_pin,
    unread_keys_for_pin,
)
from gpucloud.conformance import ConformanceContext, DerivedObject, Finding, register_check
from gpucloud.conformance.stack_options import ENFORCE_CHART_LOCK, lock_enforced
from gpucloud.plan.model import SECRET, ResourceRecord, is_unknown

RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
# Kinds the API server keeps outside namespaces (Kubernetes 1.34 built-ins); custom kinds come from their CRDs.
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "APIService",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterTrustBundle",
        "ComponentStatus",
        "CSIDriver",
        "CSINode",
        "CustomResourceDefinition",
        "DeviceClass",
        "FlowSchema",
        "IngressClass",
        "IPAddress",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "ResourceSlice",
        "RuntimeClass",
        "ServiceCIDR",
        "StorageClass",
        "StorageVersionMigration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
        "VolumeAttributesClass",
    }
)
FACTS_KEY = "helm.releases"
# Releases not rendered because no pinned chart verifies them: a CRD they may install is undecided (k8s.crd).
UNVERIFIED_KEY = "helm.unverified"


@dataclass
class ReleaseView:
    """One Release (or v4 Chart) of the plan, as the check reads it."""

    record: ResourceRecord
    chart: str
    version: str
    repository: str | None
    name: str
    namespace: str
    values: Any
    pin: ChartPin | None = None
    filled: dict[str, Any] = field(default_factory=dict)
    placeholders: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return f"chart {self.pin.name}@{self.pin.version}" if self.pin else LOCK_SOURCE


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and not is_unknown(value) else None


def _view(r: ResourceRecord, program_dir: str) -> tuple[ReleaseView, list[Finding]]:
    repo = r.inputs.get("repositoryOpts")
    values, problems = _effective_values(r, Path(program_dir or "."))
    view = ReleaseView(
        record=r,
        chart=_text(r.inputs.get("chart")) or "",
        version=_text(r.inputs.get("version")) or "",
        repository=_text(repo.get("repo")) if isinstance(repo, Mapping) else None,
        # An unnamed Release is autonamed from its resource name; that is what the chart's fullname sees.
        name=_text(r.inputs.get("name")) or r.name,
        namespace=_text(r.inputs.get("namespace")) or "default",
        values=values,
    )
    return view, problems


def _effective_values(r: ResourceRecord, program_dir: Path) -> tuple[Any, list[Finding]]:
    """`valueYamlFiles` merged in order, then `values` over them, as the Release hands them to Helm."""
    values = r.inputs.get("values") or {}
    files = r.inputs.get("valueYamlFiles") or []
    if not files or not isinstance(values, Mapping) or not isinstance(files, list):
        return values, []
    merged: dict[str, Any] = {}
    problems: list[Finding] = []
    for i, item in enumerate(files):
        asset = item.get("asset") if isinstance(item, Mapping) else None
        loaded, reason = None, "not a local FileAsset or StringAsset"
        try:
            if isinstance(asset, Mapping) and isinstance(asset.get("text"), str):
                loaded, reason = yaml.safe_load(asset["text"]), ""
            elif isinstance(asset, Mapping) and isinstance(asset.get("path"), str):
                path = Path(asset["path"])
                loaded = yaml.safe_load((path if path.is_absolute() else program_dir / path).read_text())
                reason = ""
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:  # a binary or non-UTF-8 values file too
            reason = str(exc).splitlines()[0]
        if isinstance(loaded, Mapping):
            _deep_merge(merged, loaded)
        elif reason:
            problems.append(
                Finding(
                    "helm.values",
                    "warning",
                    r.urn,
                    f"valueYamlFiles[{i}]",
                    f"a values file the check cannot read offline ({reason}): its keys are neither checked "
                    "nor rendered",
                    "a local FileAsset or StringAsset holding a YAML mapping",
                    "pulumi-kubernetes helm.v3.Release valueYamlFiles",
                )
            )
    _deep_merge(merged, values)
    return merged, problems


def _deep_merge(into: dict[str, Any], over: Mapping[str, Any]) -> None:
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(into.get(k), dict):
            _deep_merge(into[k], v)
        else:
            into[k] = dict(v) if isinstance(v, Mapping) else v


def _sentinel(value: Any) -> bool:
    return is_unknown(value) or (isinstance(value, str) and value == SECRET)


_UNVERIFIED = (
    "not verified against a pinned chart: {what}, so its values, render and objects are not checked (this stack "
    f"does not enforce gpucloud's charts lock; {ENFORCE_CHART_LOCK}: true would make this an error)"
)


def _lock_findings(view: ReleaseView, lock: ChartsLock, enforced: bool) -> Iterable[Finding]:
    """Match chart/version/repository against the lock; set view.pin when the vendored copy is this chart.

    Where the stack does not enforce the lock (a program that is not gpucloud's has no obligation to use it), a
    chart the lock does not cover is a warning: unverified, which says nothing about whether it exists upstream.
    """
    urn = view.record.urn
    severity: Any = "error" if enforced else "warning"
    if not view.chart:
        yield Finding(
            "helm.lock",
            "warning",
            urn,
            "chart",
            "the chart is unknown at preview: it cannot be matched against the lock nor rendered",
            "a chart name or oci:// URL known at plan time",
            LOCK_SOURCE,
        )
        return
    oci = view.chart.startswith("oci://")
    pin = lock.by_repository(view.chart) if oci else lock.charts.get(view.chart)
    name = view.chart.rstrip("/").rsplit("/", 1)[-1] if oci else view.chart
    by_name = pin or lock.charts.get(name)
    if by_name is None:
        related = [f"{a.ref} ({a.kind}, not a chart)" for a in lock.artifacts.values() if a.name.startswith(name)]
        yield Finding(
            "helm.lock",
            severity,
            urn,
            "chart",
            f"chart {view.chart} is not in the charts lock: nothing pins or vendors it, so the install is "
            "unchecked and may not exist upstream"
            if enforced
            else f"chart {view.chart} is " + _UNVERIFIED.format(what="the charts lock does not pin it"),
            (f"the lock pins {', '.join(related)} instead; " if related else "")
            + f"a pinned chart: {', '.join(sorted(lock.charts))}",
            LOCK_SOURCE,
        )
        return
    if is_unknown(view.record.inputs.get("version")):
        yield Finding(
            "helm.lock",
            "warning",
            urn,
            "version",
            f"the version of chart {by_name.name} is unknown at preview: it cannot be matched against the lock",
            f"version {by_name.version!r}, known at plan time",
            LOCK_SOURCE,
        )
        return
    if view.version in lock.versions.get(by_name.name, {}):
        # A chart pinned at several versions (one per Kubernetes minor): render the one the release names.
        by_name = lock.versions[by_name.name][view.version]
        if pin is not None:
            pin = by_name
    if view.version != by_name.version:
        asked = view.version or "(none: the newest, whatever it is)"
        yield Finding(
            "helm.lock",
            severity,
            urn,
            "version",
            f"chart {by_name.name} version {asked} is not the pinned version"
            if enforced
            else f"chart {by_name.name} version {asked} is "
            + _UNVERIFIED.format(what=f"the lock pins version {by_name.version}"),
            f"version {by_name.version!r} (vendored at {by_name.path}); upgrading is a lock change plus the "
            "vendored copy",
            LOCK_SOURCE,
        )
        return
    if pin is None or (not oci and not by_name.matches_repository(view.repository)):
        where = view.chart if oci else (view.repository or "no repository")
        how = (
            f"chart={by_name.release_chart!r} with no repositoryOpts (upstream publishes it only as OCI)"
            if by_name.oci
            else f"chart={by_name.name!r} with repositoryOpts.repo={by_name.repository!r}"
        )
        yield Finding(
            "helm.lock",
            severity,
            urn,
            "repositoryOpts.repo" if not oci else "chart",
            f"chart {by_name.ref} is requested from {where}, which does not serve the pinned chart: the install fails"
            if enforced
            else f"chart {by_name.ref} from {where} is "
            + _UNVERIFIED.format(what="the lock pins it from another repository"),
            how,
            LOCK_SOURCE,
        )
        if not enforced:
            return
    view.pin = by_name


def _fill_values(view: ReleaseView) -> None:
    """Replace the values known only after `up` with placeholders typed by the chart's defaults."""
    assert view.pin is not None
    if not isinstance(view.values, Mapping):
        view.filled = {}
        return
    model = cached_model(view.pin)
    defaults = model.defaults if model is not None else chart_defaults_for_pin(view.pin)
    view.filled, view.placeholders = fill_unknowns(view.values, defaults, _sentinel)


def _values_findings(view: ReleaseView) -> Iterable[Finding]:
    assert view.pin is not None
    if not isinstance(view.values, Mapping):
        yield Finding(
            "helm.values",
            "warning",
            view.record.urn,
            "values",
            "the values are unknown at preview; the chart is rendered with its defaults",
            "values known at plan time",
            view.source,
        )
        return
    for unread in unread_keys_for_pin(view.pin, view.values):
        yield Finding(
            "helm.values",
            "error",
            view.record.urn,
            f"values.{unread.dotted}",
            f"chart {view.pin.ref} reads no values key `{unread.dotted}`: Helm drops it without a word "
            "(the chart ships no values.schema.json)",
            unread.hint,
            f"{view.source} (values.yaml and templates)",
        )


def _render_findings(view: ReleaseView, rendered: Rendered) -> Iterable[Finding]:
    assert view.pin is not None
    urn = view.record.urn
    if rendered.error is not None:
        yield Finding(
            "helm.render",
            "error",
            urn,
            "values",
            f"helm template {view.pin.ref} fails, so `helm install` would too: {rendered.error}",
            "values under which the chart renders (the `required`/`fail` message names what it needs)",
            view.source,
        )
        return
    if {str(o.get("kind")) for o in rendered.objects} & set(WORKLOAD_KINDS):
        return
    # Only now the templates matter: do they define a workload that these values switched off?
    model = model_for_pin(view.pin)
    if model.workload_kinds:
        yield Finding(
            "helm.workload",
            "error",
            urn,
            "values",
            f"chart {view.pin.ref} renders no {'/'.join(model.workload_kinds)} with these values: the release "
            "installs RBAC and services but nothing runs",
            f"the values that enable the chart's {'/'.join(model.workload_kinds)} (see its templates)",
            view.source,
        )


def _cluster_scoped(ctx: ConformanceContext, rendered: Iterable[Rendered]) -> set[str]:
    kinds = set(CLUSTER_SCOPED_KINDS)
    crds: list[Mapping[str, Any]] = [r.inputs for r in ctx.plan.of_type(CRD_TYPE)]
    for result in rendered:
        crds += [o for o in result.objects if o.get("kind") == "CustomResourceDefinition"]
    for crd in crds:
        spec = crd.get("spec") if isinstance(crd, Mapping) else None
        if isinstance(spec, Mapping) and spec.get("scope") == "Cluster":
            kind = (spec.get("names") or {}).get("kind")
            if isinstance(kind, str):
                kinds.add(kind)
    return kinds


def _submit_renders(
    pool: ThreadPoolExecutor, views: list[ReleaseView], kube_version: str
) -> dict[str, Future[Rendered]]:
    def one(view: ReleaseView) -> Rendered:
        assert view.pin is not None
        return render_pinned(
            view.pin,
            release=view.name,
            namespace=view.namespace,
            values=view.filled,
            kube_version=kube_version,
            include_crds=True,
        )

    # Biggest charts first: they finish last anyway, and the small ones fill the gaps.
    order = sorted(views, key=lambda v: -_chart_weight(v.pin))
    return {v.record.urn: pool.submit(one, v) for v in order}


def _chart_weight(pin: ChartPin | None) -> int:
    try:
        return (pin.chart_dir / "values.yaml").stat().st_size if pin else 0
    except OSError:
        return 0


@register_check("helm")
def check_helm(ctx: ConformanceContext) -> Iterable[Finding]:
    records = ctx.plan.of_type(*RELEASE_TYPES)
    if not records:
        return []
    try:
        lock = load_lock()
    except LockError as exc:
        return [Finding("helm.lock", "error", records[0].urn, "chart", str(exc), "a readable lock", LOCK_SOURCE)]
    findings: list[Finding] = []
    views: list[ReleaseView] = []
    for r in records:
        view, problems = _view(r, ctx.plan.program_dir)
        views.append(view)
        findings += problems
    enforced = lock_enforced(ctx.plan)
    for view in views:
        findings += _lock_findings(view, lock, enforced)
    pinned = []
    ctx.facts[UNVERIFIED_KEY] = [v.record.urn for v in views if v.pin is None]
    for view in views:
        if view.pin is None:
            continue
        if not (view.pin.chart_dir / "Chart.yaml").is_file():
            # An installed copy without the repository's vendor/ tree: nothing to render or read keys from.
            ctx.facts[UNVERIFIED_KEY].append(view.record.urn)
            findings.append(
                Finding(
                    "helm.render",
                    "warning",
                    view.record.urn,
                    "chart",
                    f"the vendored chart {view.pin.ref} is missing at {view.pin.path}: not rendered nor checked",
                    "run gpucloud from a checkout of the repository (make installs it editable)",
                    LOCK_SOURCE,
                )
            )
            continue
        pinned.append(view)
        _fill_values(view)
    ctx.facts[FACTS_KEY] = {
        v.record.urn: {
            "chart": v.pin.name if v.pin else v.chart,
            "version": v.version,
            "release": v.name,
            "namespace": v.namespace,
            "values": v.filled,
            "placeholders": v.placeholders,
        }
        for v in views
    }
    helm = find_helm() if pinned else None
    if pinned and helm is None:
        findings.append(
            Finding(
                "helm.render",
                "warning",
                pinned[0].record.urn,
                "chart",
                f"no helm binary: {len(pinned)} chart(s) not rendered, so their objects are not checked",
                "run `gpucloud tools install` (pinned Helm 4.1.4, checksum-verified), put helm on PATH or set "
                "$GPUCLOUD_HELM",
                "gpucloud.charts.helm",
            )
        )
    if helm is None:
        for view in pinned:
            findings += _values_findings(view)
        return findings
    # Helm runs as a subprocess, outside the GIL: the pool renders side by side while this thread reads the
    # charts' values trees for the key check.
    # Every render starts at once: a thread mostly waits on its helm process, and the small charts then finish
    # inside the biggest one's time instead of queueing behind it.
    workers = min(len(pinned), max(4, 2 * (os.cpu_count() or 2)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="helm") as pool:
        futures = _submit_renders(pool, pinned, ctx.kubernetes_version)
        for view in pinned:
            findings += _values_findings(view)
        try:
            results = {urn: f.result() for urn, f in futures.items()}
        except HelmError as exc:  # helm vanished between the look-up and the run
            findings.append(Finding("helm.render", "warning", pinned[0].record.urn, "chart", str(exc), "helm", "helm"))
            return findings
    cluster_scoped = _cluster_scoped(ctx, results.values())
    for view in pinned:
        rendered = results[view.record.urn]
        findings += _render_findings(view, rendered)
        for obj in rendered.objects:
            manifest = dict(obj)
            metadata = dict(manifest.get("metadata") or {})
            if not metadata.get("namespace") and manifest.get("kind") not in cluster_scoped:
                metadata["namespace"] = view.namespace
            manifest["metadata"] = metadata
            ctx.derived.append(DerivedObject(view.record.urn, view.source, manifest))
    return findings


__all__ = ["CLUSTER_SCOPED_KINDS", "FACTS_KEY", "RELEASE_TYPES", "UNVERIFIED_KEY", "check_helm"]
