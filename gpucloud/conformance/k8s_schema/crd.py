"""k8s.crd: custom resources against the openAPIV3Schema of the CRDs the plan installs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from gpucloud.conformance import EKS_CLUSTER_TYPE, ConformanceContext, Finding, register_check
from gpucloud.conformance.k8s_schema.findings import validate_object
from gpucloud.conformance.k8s_schema.objects import (
    CHECK_CRD,
    VENDOR_UPSTREAM,
    K8sObject,
    _context_objects,
)
from gpucloud.conformance.k8s_schema.openapi import OpenAPISchemas, SchemaValidator, openapi_schemas
from gpucloud.conformance.k8s_schema.structural import _drop_nulls
from gpucloud.plan.model import ResourceRecord


@dataclass
class Crd:
    """One CRD the plan installs (or a vendored file offers), with its served versions' schemas."""

    name: str
    group: str
    kind: str
    scope: str
    versions: dict[str, dict[str, Any] | None]  # served version -> openAPIV3Schema (None: no schema)
    origin: str  # "chart kube-prometheus-stack@75.6.1", "resource mpijobs-crd", "vendor/upstream/crds/..."
    obj: K8sObject | None = None
    validators: dict[str, SchemaValidator] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"CRD {self.name}"


def crd_from_manifest(manifest: Mapping[str, Any], origin: str, obj: K8sObject | None = None) -> Crd | None:
    if manifest.get("kind") != "CustomResourceDefinition":
        return None
    spec = manifest.get("spec")
    names = spec.get("names") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(names, dict):
        return None
    group, kind = spec.get("group"), names.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return None
    versions: dict[str, dict[str, Any] | None] = {}
    listed = spec.get("versions")
    for v in listed if isinstance(listed, list) else []:
        if not isinstance(v, dict) or v.get("served") is not True or not isinstance(v.get("name"), str):
            continue
        schema = v.get("schema")
        tree = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        versions[v["name"]] = tree if isinstance(tree, dict) else None
    metadata = manifest.get("metadata")
    declared = metadata.get("name") if isinstance(metadata, dict) else None
    name = str(declared or f"{names.get('plural', kind.lower())}.{group}")
    return Crd(name, group, kind, str(spec.get("scope") or "Namespaced"), versions, origin, obj)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML 1.1's `=` value tag appears in CRD enums (mpi-operator); PyYAML has no constructor for it."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


_TEMPLATE_COMMENT = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}", re.DOTALL)


@cache
def _vendored_crd_texts(root: Path) -> tuple[tuple[str, str], ...]:
    """(path, text) of every vendored YAML file that may hold a CRD, read once per process."""
    if not root.is_dir():
        return ()
    out = []
    for path in sorted(root.rglob("*.y*ml")):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        if "CustomResourceDefinition" not in text:
            continue
        rel = str(path.relative_to(root.parent.parent))
        if "{{" in text:
            # A chart that ships its CRDs as templates (keda, karpenter-crd, kueue) wraps them in conditionals
            # and templated labels; without those lines the CRD itself is plain YAML. Good enough to say where
            # a CRD could come from; the plan's own copy arrives rendered by Helm.
            # Template comments span lines (kueue's licence header): drop them whole first.
            text = _TEMPLATE_COMMENT.sub("", text)
            text = "\n".join(line for line in text.splitlines() if "{{" not in line and "}}" not in line)
            rel += " (Helm template)"
        out.append((rel, text))
    return tuple(out)


@cache
def vendored_crds(group: str, kind: str, root: Path = VENDOR_UPSTREAM) -> tuple[Crd, ...]:
    """The CRDs for one group/kind that the vendored upstream bundle offers (chart crds/, CRD files, manifests).

    Read only when a custom resource lacks its CRD in the plan, to say where one could come from; a text
    match picks the few files worth parsing (the bundle's CRDs are megabytes of YAML).
    """
    kind_line = re.compile(rf"^\s*kind:\s*['\"]?{re.escape(kind)}['\"]?\s*$", re.MULTILINE)
    out: list[Crd] = []
    for rel, text in _vendored_crd_texts(root):
        if group not in text or not kind_line.search(text):
            continue
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError:
            continue
        for doc in docs:
            crd = crd_from_manifest(doc, rel) if isinstance(doc, dict) else None
            if crd is not None and crd.group == group and crd.kind == kind:
                out.append(crd)
    return tuple(out)


@dataclass
class CrdIndex:
    crds: list[Crd]

    def for_kind(self, group: str, kind: str) -> list[Crd]:
        return [c for c in self.crds if c.group == group and c.kind == kind]


def crd_index(objects: Iterable[K8sObject]) -> CrdIndex:
    crds = []
    for obj in objects:
        if obj.api_version.startswith("apiextensions.k8s.io/") and obj.kind == "CustomResourceDefinition":
            crd = crd_from_manifest(obj.manifest, obj.origin, obj)
            if crd is not None:
                crds.append(crd)
    return CrdIndex(crds)


def _cr_validator(crd: Crd, version: str, schemas: OpenAPISchemas) -> SchemaValidator | None:
    tree = crd.versions.get(version)
    if tree is None:
        return None
    if version not in crd.validators:
        crd.validators[version] = schemas.structural_validator(tree)
    return crd.validators[version]


# What the Helm check (gpucloud.conformance.helm) leaves in ctx.facts: one entry per release it looked at.
HELM_FACTS_KEY = "helm.releases"
# Releases the Helm check could not render because no pinned chart verifies them (gpucloud.conformance.helm).
HELM_UNVERIFIED_KEY = "helm.unverified"


def _unrendered_releases(ctx: ConformanceContext) -> list[ResourceRecord]:
    """Helm releases/charts whose objects are not in the context, so a CRD they carry may be missing from it.

    A release the Helm check could not render because nothing verifies its chart (outside the lock, another
    version, not vendored: HELM_UNVERIFIED_KEY) and a helm.v3.Chart the offline plan could not expand may install
    any CRD. Otherwise, once the Helm check has rendered anything, a release with no objects failed to render (the
    Helm check reports why): it installs nothing, so a custom resource relying on it does lack its CRD. When
    nothing rendered at all (the Helm check skipped, or no helm binary), the plan's CRDs are not knowable.
    """
    rendered = {d.owner for d in ctx.derived}
    unverified = set(ctx.facts.get(HELM_UNVERIFIED_KEY) or ())
    if HELM_FACTS_KEY in ctx.facts and rendered & set(ctx.facts[HELM_FACTS_KEY]):
        return [
            r
            for r in ctx.plan
            if r.urn in unverified or (r.type.endswith("/v3:Chart") and not ctx.plan.children(r.urn))
        ]
    return [
        r
        for r in ctx.plan
        if r.type.startswith("kubernetes:helm.sh/")
        and r.urn not in rendered
        and not (r.type.endswith("/v3:Chart") and ctx.plan.children(r.urn))
    ]


def _served(crds: Iterable[Crd]) -> str:
    return "; ".join(f"CRD {c.name} serving {', '.join(sorted(c.versions)) or 'nothing'} from {c.origin}" for c in crds)


_CLUSTER_TYPES = (EKS_CLUSTER_TYPE, "eks:index:Cluster")
# CRDs every EKS cluster comes with, installed by the Amazon VPC CNI and the VPC resource controller that EKS
# runs (AWS EKS user guide: custom networking ENIConfig, security groups for pods, network policies). Their
# schemas are not in the vendored bundle, so custom resources of these kinds are taken as served, unchecked.
EKS_BUILTIN_CRDS = {
    ("crd.k8s.amazonaws.com", "ENIConfig"),
    ("vpcresources.k8s.aws", "SecurityGroupPolicy"),
    ("vpcresources.k8s.aws", "CNINode"),
    ("networking.k8s.aws", "PolicyEndpoint"),
}
_PLAN_CRDS = "the plan's CRDs (CustomResourceDefinition resources and the CRDs rendered charts install)"


@register_check(CHECK_CRD)
def check_crd(ctx: ConformanceContext) -> Iterator[Finding]:
    """Custom resources against the CRDs the plan installs; CRDs of one name that disagree on served versions."""
    objects = _context_objects(ctx)
    if not objects:
        return
    try:
        schemas = openapi_schemas(ctx.kubernetes_version)
    except LookupError:
        return  # k8s.schema already says why
    index = crd_index(objects)
    yield from _crd_clashes(index)
    # A plan that creates no cluster (a team stack on the platform's cluster) cannot see the CRDs installed
    # there: a missing CRD is then a warning, and the vendored CRD of that kind stands in for the schema.
    owns_cluster = bool(ctx.plan.of_type(*_CLUSTER_TYPES))
    unrendered: list[ResourceRecord] | None = None
    for obj in objects:
        api_version, kind = obj.api_version, obj.kind
        if not api_version or not kind or schemas.is_builtin_group(api_version) or obj.patch:
            continue
        group, version = obj.group_version
        crds = index.for_kind(group, kind)
        if not crds and (group, kind) in EKS_BUILTIN_CRDS:
            continue
        if not crds:
            if unrendered is None:
                unrendered = _unrendered_releases(ctx)
            yield _missing_crd(obj, group, version, unrendered, owns_cluster)
            if owns_cluster:
                continue
            crds = [c for c in vendored_crds(group, kind) if version in c.versions][:1]
            if not crds:
                continue
        serving = [c for c in crds if version in c.versions]
        if not serving:
            elsewhere = [c for c in vendored_crds(group, kind) if version in c.versions]
            hint = f"; {_served(elsewhere)}" if elsewhere else ""
            yield Finding(
                CHECK_CRD,
                "error",
                obj.urn,
                "apiVersion",
                f"{kind} {obj.name or '(unnamed)'}: {api_version} is not served by the installed "
                f"{', '.join(sorted({c.name for c in crds}))}: the API server rejects the object",
                f"apiVersion one of: {', '.join(sorted({f'{group}/{v}' for c in crds for v in c.versions}))}{hint}",
                _served(crds),
                obj.ref,
            )
            continue
        for crd in serving:
            validator = _cr_validator(crd, version, schemas)
            if validator is None:
                continue
            source = f"CRD {crd.name} {version} from {crd.origin}"
            yield from validate_object(validator, obj, _drop_nulls(obj.manifest), CHECK_CRD, source)


def _missing_crd(
    obj: K8sObject, group: str, version: str, unrendered: list[ResourceRecord], owns_cluster: bool
) -> Finding:
    offered = list(vendored_crds(group, obj.kind))
    where = f"; the vendored upstream bundle has it: {_served(offered)}" if offered else ""
    label = f"{obj.kind} {obj.name or '(unnamed)'}: no CRD for kind {obj.kind} in group {group}"
    expected = f"a CustomResourceDefinition for {obj.kind}.{group} serving {version}, installed by the plan{where}"
    if not owns_cluster:
        expected = f"a CustomResourceDefinition for {obj.kind}.{group} serving {version} in the cluster{where}"
        message = (
            f"{label} in this plan, and the cluster is created elsewhere (no EKS cluster in this plan): make sure "
            "the cluster's owner installs it"
        )
        if any(version in c.versions for c in offered):
            message += "; validated against the vendored CRD instead"
        return Finding(CHECK_CRD, "warning", obj.urn, "apiVersion", message, expected, _PLAN_CRDS, obj.ref)
    if unrendered:
        # A release that was not rendered (the Helm check was skipped or failed) may carry the CRD: say so
        # without calling it missing.
        names = ", ".join(r.name for r in unrendered)
        message = (
            f"undecided: {label} among the plan's objects, and Helm releases were not rendered ({names}): cannot tell "
            "whether one installs it"
        )
        return Finding(CHECK_CRD, "warning", obj.urn, "apiVersion", message, expected, _PLAN_CRDS, obj.ref)
    message = f"{label} is installed by this plan: the API server rejects the object"
    return Finding(CHECK_CRD, "error", obj.urn, "apiVersion", message, expected, _PLAN_CRDS, obj.ref)


def _crd_clashes(index: CrdIndex) -> Iterator[Finding]:
    by_name: dict[str, list[Crd]] = {}
    for crd in index.crds:
        by_name.setdefault(crd.name, []).append(crd)
    for name, crds in by_name.items():
        first = crds[0]
        for other in crds[1:]:
            if set(other.versions) == set(first.versions) or other.obj is None:
                continue
            yield Finding(
                CHECK_CRD,
                "error",
                other.obj.urn,
                "spec.versions",
                f"CRD {name} is installed twice with different served versions: "
                f"{', '.join(sorted(first.versions)) or 'none'} by {first.origin}, "
                f"{', '.join(sorted(other.versions)) or 'none'} by {other.origin}; a cluster holds one CRD "
                "per name, so one install replaces or fails against the other",
                "one CRD per name: install only one of them",
                f"{_served([first, other])}",
                other.obj.ref,
            )
