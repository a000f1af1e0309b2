"""Upgrade checks: does every part of the plan run on the cluster's Kubernetes minor, and is a version move one the
control plane can take?

- `upgrade.kubelet-skew`: a node group's kubelet (its `version`, and the minor of its `releaseVersion`), a
  self-managed ASG's and a Karpenter node class's (the minor and release gpucloud records on them) is never newer
  than the control plane and at most three minors older (Kubernetes version skew policy); a release of another minor
  than the group's `version` is refused by EKS.
- `upgrade.control-plane-step`: against a base plan (`--compare`, the upgrade command), the control plane moves at
  most one minor (EKS UpdateClusterVersion) and never down.
- `upgrade.addon-version`: every EKS add-on is pinned, to a build the versions table knows for the minor.
- `upgrade.chart-kube-version`: every release's chart declares a `kubeVersion` that accepts the minor.
- `upgrade.removed-api`: objects that use a built-in API the target minor no longer serves (from kubernetes-validate's
  per-version schemas): an error against a base plan's older minor, a warning for the next minor otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from gpucloud import versions
from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import VENDOR_CHARTS
from gpucloud.fleet import labels as L
from gpucloud.fleet import types as T
from gpucloud.plan.model import is_unknown

NODE_GROUP = T.NODE_GROUP
ADDON = T.EKS_ADDON
RELEASE = "kubernetes:helm.sh/v3:Release"
EKS_UPDATE_DOCS = "EKS UpdateClusterVersion: one minor version at a time (docs.aws.amazon.com/eks, update-cluster)"
# Set by the caller that knows the base (plan --compare, gpucloud upgrade): the control plane's minor before the move.
BASE_VERSION_FACT = "upgrade.base_kubernetes_version"


def _node_versions(ctx: ConformanceContext) -> Iterator[tuple[str, str, Any, Any, str]]:
    """(urn, kind, kubelet minor, AMI release, field) of every node group, self-managed ASG and Karpenter node class.

    A managed node group states both in its inputs; a self-managed ASG's launch template boots an image id and a
    Karpenter alias names only the release date, so gpucloud records the pool's minor and release as ASG tags and
    EC2NodeClass labels (fleet/labels.py).
    """
    for r in ctx.plan.of_type(NODE_GROUP):
        yield r.urn, "node group", r.inputs.get("version"), r.inputs.get("releaseVersion"), "version"
    for r in ctx.plan.of_type(T.AUTOSCALING_GROUP):
        tags = {t.get("key"): t.get("value") for t in r.inputs.get("tags") or [] if isinstance(t, dict)}
        if L.KUBELET_MINOR in tags:
            yield r.urn, "autoscaling group", tags[L.KUBELET_MINOR], tags.get(L.AMI_RELEASE), "tags"
    for r in ctx.plan.of_type(T.EC2_NODE_CLASS):
        labels = (r.inputs.get("metadata") or {}).get("labels") or {}
        if L.KUBELET_MINOR in labels:
            yield r.urn, "Karpenter node class", labels[L.KUBELET_MINOR], labels.get(L.AMI_RELEASE), "metadata.labels"


def _kubelet_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    plane = ctx.kubernetes_version
    for urn, kind, version, release, version_field in _node_versions(ctx):
        release_field = "releaseVersion" if kind == "node group" else version_field
        version_minor = versions.minor_of(version) if isinstance(version, str) and not is_unknown(version) else None
        # Only AL2023 releases name the kubelet minor (1.35.6-20260714); Bottlerocket's carry the OS version.
        al2023 = isinstance(release, str) and bool(re.match(r"^1\.\d+\.\d+-\d{8}$", release))
        release_minor = versions.minor_of(str(release)) if al2023 else None
        if version_minor and release_minor and version_minor != release_minor:
            yield Finding(
                "upgrade.kubelet-skew",
                "error",
                urn,
                release_field,
                f"AMI release {release} is built for Kubernetes {release_minor}, the {kind} runs {version}: "
                + ("EKS refuses a release of another minor" if kind == "node group" else "the pins disagree"),
                f"a {version_minor} release (the versions table's is {_table_release(version_minor)})",
                versions.SOURCE,
            )
        if kind == "Karpenter node class" and release is not None and version_minor and version_minor != plane:
            # An alias (al2023@v20260714) names no minor: Karpenter looks the AMI up for the cluster's version, so
            # the pool's own minor is likely not what its nodes run. Not sure enough of the lookup to fail the plan.
            yield Finding(
                "upgrade.kubelet-skew",
                "warning",
                urn,
                version_field,
                f"the pool pins kubelet {version_minor}, but its Karpenter AMI alias names only a release date and "
                f"is resolved for the cluster's Kubernetes version ({plane}): its nodes may run {plane}",
                f"the pool on the cluster's minor ({plane}), or an explicit ami.id built for {version_minor}",
                "karpenter.k8s.aws/v1 EC2NodeClass amiSelectorTerms.alias (family@version, no Kubernetes minor)",
            )
        field, kubelet = (version_field, version_minor) if version_minor else (release_field, release_minor)
        if kubelet is None:
            continue
        behind = versions.minor_distance(plane, kubelet)
        if behind < 0:
            yield Finding(
                "upgrade.kubelet-skew",
                "error",
                urn,
                field,
                f"kubelet {kubelet} is newer than the control plane ({plane}): a kubelet may never be ahead",
                f"Kubernetes {plane} or older on the nodes; upgrade the control plane first",
                versions.SKEW_POLICY,
            )
        elif behind > versions.MAX_KUBELET_SKEW:
            major, minor = versions.minor_key(plane)
            yield Finding(
                "upgrade.kubelet-skew",
                "error",
                urn,
                field,
                f"kubelet {kubelet} is {behind} minors behind the control plane ({plane}); at most "
                f"{versions.MAX_KUBELET_SKEW} are supported",
                f"Kubernetes {major}.{minor - versions.MAX_KUBELET_SKEW} or newer on the nodes",
                versions.SKEW_POLICY,
            )


def _table_release(minor: str) -> str:
    try:
        return versions.for_minor(minor).ami["al2023"].version
    except versions.VersionsError:
        return "(none: the versions table has no such minor)"


def _step_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    base = ctx.facts.get(BASE_VERSION_FACT)
    if not isinstance(base, str) or versions.minor_of(base) is None:
        return
    urn = next((r.urn for r in ctx.plan.of_type("aws:eks/cluster:Cluster")), "")
    step = versions.minor_distance(ctx.kubernetes_version, base)
    if step > versions.MAX_CONTROL_PLANE_STEP:
        path = [base]
        while versions.minor_distance(ctx.kubernetes_version, path[-1]) > 0:
            path.append(versions.next_minor(path[-1]))
        yield Finding(
            "upgrade.control-plane-step",
            "error",
            urn,
            "version",
            f"the control plane moves {step} minors ({base} -> {ctx.kubernetes_version}) in one `pulumi up`: EKS "
            "upgrades one minor at a time and the update fails",
            f"one step per minor: {' -> '.join(path)} (gpucloud upgrade prints the steps)",
            EKS_UPDATE_DOCS,
        )
    elif step < 0:
        yield Finding(
            "upgrade.control-plane-step",
            "error",
            urn,
            "version",
            f"the control plane moves down ({base} -> {ctx.kubernetes_version}): EKS cannot downgrade a cluster",
            f"Kubernetes {base} or newer",
            EKS_UPDATE_DOCS,
        )


def _addon_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    minor = ctx.kubernetes_version
    try:
        row = versions.for_minor(minor)
    except versions.VersionsError as exc:
        first = next(iter(ctx.plan.of_type(ADDON)), None)
        if first is not None:
            yield Finding("upgrade.addon-version", "warning", first.urn, "addonVersion", str(exc), "", versions.SOURCE)
        return
    for r in ctx.plan.of_type(ADDON):
        name, pinned = r.inputs.get("addonName"), r.inputs.get("addonVersion")
        if not isinstance(name, str) or is_unknown(name) or is_unknown(pinned):
            continue
        builds = row.addons.get(name)
        if pinned in (None, ""):
            yield Finding(
                "upgrade.addon-version",
                "warning",
                r.urn,
                "addonVersion",
                f"add-on {name} is not pinned: EKS installs its default for {minor} and the plan cannot say which, "
                "nor will a version bump move it",
                f"an exact build ({builds.version} for {minor})"
                if builds and builds.version
                else f"an exact build: `gpucloud versions refresh` reads the builds for {minor} from EKS",
                versions.SOURCE,
            )
            continue
        if builds is None or not builds.compatible:
            yield Finding(
                "upgrade.addon-version",
                "warning",
                r.urn,
                "addonVersion",
                f"undecided: the versions table knows no build of {name} for Kubernetes {minor}, so {pinned} cannot "
                "be checked",
                f"a build DescribeAddonVersions lists for {minor} (`gpucloud versions refresh`)",
                versions.SOURCE,
            )
        elif pinned not in builds.compatible:
            yield Finding(
                "upgrade.addon-version",
                "error" if builds.complete else "warning",
                r.urn,
                "addonVersion",
                f"{name} {pinned} is not a build EKS lists for Kubernetes {minor}"
                if builds.complete
                else f"undecided: {name} {pinned} is not among the builds the versions table knows for {minor}",
                f"one of {', '.join(builds.compatible)}",
                versions.SOURCE,
            )
        elif not builds.verified and pinned == builds.version:
            yield Finding(
                "upgrade.addon-version",
                "warning",
                r.urn,
                "addonVersion",
                f"{name} {pinned} is the versions table's build for {minor}, but no source confirmed it for this minor",
                f"a build DescribeAddonVersions lists for {minor} (`gpucloud versions refresh`)",
                versions.SOURCE,
            )


def _chart_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    target = f"{ctx.kubernetes_version}.0"
    for r in ctx.plan.of_type(RELEASE):
        chart, version = r.inputs.get("chart"), r.inputs.get("version")
        if not isinstance(chart, str) or not isinstance(version, str) or is_unknown(chart) or is_unknown(version):
            continue
        name = chart.rstrip("/").rsplit("/", 1)[-1]
        meta = VENDOR_CHARTS / f"{name}-{version}" / "Chart.yaml"
        if not meta.is_file():
            continue  # helm.lock reports charts the lock does not pin
        constraint = (yaml.safe_load(meta.read_text()) or {}).get("kubeVersion")
        if not constraint:
            continue
        verdict = kube_version_satisfies(str(constraint), target)
        if verdict is False:
            yield Finding(
                "upgrade.chart-kube-version",
                "error",
                r.urn,
                "version",
                f"chart {name}@{version} declares kubeVersion {constraint!r}, which excludes Kubernetes {target}: "
                "helm refuses to install it",
                f"a {name} version whose kubeVersion accepts {target}",
                f"chart {name}@{version} Chart.yaml",
            )
        elif verdict is None:
            yield Finding(
                "upgrade.chart-kube-version",
                "warning",
                r.urn,
                "version",
                f"undecided: chart {name}@{version} kubeVersion {constraint!r} uses a form this check does not read",
                f"a kubeVersion constraint that accepts {target}",
                f"chart {name}@{version} Chart.yaml",
            )


def _removed_api_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    from gpucloud.conformance.k8s_schema.objects import _context_objects
    from gpucloud.conformance.k8s_schema.openapi import carried_versions, openapi_schemas

    base = ctx.facts.get(BASE_VERSION_FACT)
    carried = {versions.minor_of(v) for v in carried_versions()}
    if isinstance(base, str) and versions.minor_distance(ctx.kubernetes_version, base) > 0:
        old, new, severity = base, ctx.kubernetes_version, "error"
    else:
        old, new, severity = ctx.kubernetes_version, versions.next_minor(ctx.kubernetes_version), "warning"
    if old not in carried or new not in carried:
        return
    try:
        before, after = openapi_schemas(old), openapi_schemas(new)
    except LookupError:
        return
    removed = set(before.gvks) - set(after.gvks)
    if not removed:
        return
    for obj in _context_objects(ctx):
        key = (obj.api_version, obj.kind)
        if key not in removed:
            continue
        served = sorted(av for av, k in after.gvks if k == obj.kind)
        yield Finding(
            "upgrade.removed-api",
            severity,  # type: ignore[arg-type]
            obj.urn,
            "apiVersion",
            f"{obj.kind} {obj.name or '(unnamed)'} uses {obj.api_version}, which Kubernetes {new} no longer serves"
            + ("" if severity == "error" else f": it blocks the upgrade from {old}"),
            f"apiVersion one of: {', '.join(served)}" if served else f"an API that Kubernetes {new} serves",
            f"Kubernetes {old} and {new} OpenAPI (kubernetes-validate)",
            obj.ref,
        )


# --- Helm / Masterminds semver constraints, the subset charts use ------------------------------------------------

_CONSTRAINT = re.compile(
    r"^\s*(>=|<=|!=|=|>|<|\^|~)?\s*v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?(-[0-9A-Za-z.-]*)?\s*$"
)


def _version_tuple(version: str) -> tuple[int, int, int]:
    major, minor, patch, *_ = [*(int(p) for p in re.findall(r"\d+", version.split("-")[0])[:3]), 0, 0, 0]
    return major, minor, patch


def _one(term: str, have: tuple[int, int, int]) -> bool | None:
    m = _CONSTRAINT.match(term)
    if m is None:
        return None
    op, major, minor, patch = m.group(1) or "=", int(m.group(2)), m.group(3), m.group(4)
    wild_minor = minor in (None, "x", "*")
    wild_patch = patch in (None, "x", "*")
    want = (major, 0 if wild_minor else int(str(minor)), 0 if wild_patch else int(str(patch)))
    if op == "^":
        upper = (major + 1, 0, 0) if major > 0 else (0, want[1] + 1, 0)
        return want <= have < upper
    if op == "~":
        upper = (major + 1, 0, 0) if wild_minor else (major, want[1] + 1, 0)
        return want <= have < upper
    if op == "=" and (wild_minor or wild_patch):
        return have[: 1 if wild_minor else 2] == want[: 1 if wild_minor else 2]
    table: dict[str, Any] = {
        ">=": have >= want,
        "<=": have <= want,
        ">": have > want,
        "<": have < want,
        "=": have == want,
        "!=": have != want,
    }
    return bool(table[op])


def kube_version_satisfies(constraint: str, version: str) -> bool | None:
    """Whether `version` meets a chart's `kubeVersion` (`||` of `,`/space-separated terms); None when unreadable."""
    have = _version_tuple(version)
    any_true = False
    for alternative in constraint.split("||"):
        # ">= 1.16-0" is one term: an operator binds to the version after it.
        joined = re.sub(r"(>=|<=|!=|=|>|<|\^|~)\s+", r"\1", alternative.strip())
        terms = [t for t in re.split(r"[,\s]+", joined) if t.strip()]
        results = [_one(t, have) for t in terms]
        if any(r is None for r in results):
            return None
        if results and all(results):
            any_true = True
    return any_true


@register_check("upgrade")
def check_upgrade(ctx: ConformanceContext) -> Iterator[Finding]:
    from gpucloud.conformance.scheduling import guarded

    yield from guarded(ctx, "upgrade", "kubelet skew", lambda: _kubelet_findings(ctx))
    yield from guarded(ctx, "upgrade", "control-plane step", lambda: _step_findings(ctx))
    yield from guarded(ctx, "upgrade", "add-on versions", lambda: _addon_findings(ctx))
    yield from guarded(ctx, "upgrade", "chart kubeVersion", lambda: _chart_findings(ctx))
    yield from guarded(ctx, "upgrade", "removed APIs", lambda: _removed_api_findings(ctx))


__all__ = ["BASE_VERSION_FACT", "check_upgrade", "kube_version_satisfies"]
