"""The Kubernetes objects a plan creates, registered by the program or rendered by a chart, as the schema checks
read them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate

from gpucloud import package_data
from gpucloud.conformance import ConformanceContext, DerivedObject
from gpucloud.plan.model import UNKNOWN, Plan, ResourceRecord

CHECK_SCHEMA = "k8s.schema"
CHECK_CRD = "k8s.crd"
KV_VERSION: str = kubernetes_validate.__version__
_SCHEMA_ROOT = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
_DEFS_ID = "https://kubernetes.io/api/_definitions.json"
_OBJECT_META = f"{_DEFS_ID}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_CRD_API = "apiextensions.k8s.io/v1"
VENDOR_UPSTREAM = package_data.UPSTREAM

# Plan resources that are not Kubernetes objects themselves: Helm releases and charts (their rendered objects
# arrive as derived objects), YAML/kustomize groups (their children are registered on their own), providers.
_NOT_OBJECTS_GROUPS = {"helm.sh", "yaml", "yaml/v2", "kustomize", "kustomize/v2"}


@dataclass(frozen=True)
class K8sObject:
    """One object to validate: where it comes from (plan resource or rendered) and its manifest."""

    urn: str
    manifest: dict[str, Any]
    ref: str | None  # a derived object's "apiVersion/kind ns/name"; None for a plan resource
    origin: str  # "resource <name>" or the derived object's source ("chart karpenter@1.12.1")
    patch: bool = False  # a <Kind>Patch resource: every field optional

    @property
    def api_version(self) -> str:
        return str(self.manifest.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind") or "")

    @property
    def group_version(self) -> tuple[str, str]:
        group, _, version = self.api_version.rpartition("/")
        return group, version

    @property
    def name(self) -> str:
        metadata = self.manifest.get("metadata")
        return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""


# --- collecting the objects ---------------------------------------------------------------------------------


def _token_gvk(type_: str) -> tuple[str, str] | None:
    """`kubernetes:<group>/<version>:<Kind>` -> (apiVersion, Kind); the core group's apiVersion is plain `v1`."""
    parts = type_.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return None
    module, kind = parts[1], parts[2]
    group, _, version = module.rpartition("/")
    if not version or group in _NOT_OBJECTS_GROUPS or module in _NOT_OBJECTS_GROUPS:
        return None
    return (version if group == "core" else f"{group}/{version}"), kind


def _clean(value: Any) -> Any:
    # Inputs the SDK adds for its own bookkeeping start with "__"; they never reach the API server.
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not (isinstance(k, str) and k.startswith("__"))}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def plan_object(r: ResourceRecord) -> K8sObject | None:
    """The manifest a pulumi-kubernetes resource sends, from its recorded inputs (None for non-objects)."""
    if not r.custom:
        return None
    gvk = _token_gvk(r.type)
    if gvk is None:
        return None
    api_version, kind = gvk
    manifest = _clean(r.inputs)
    patch = False
    declared_kind = manifest.get("kind")
    if kind.endswith("Patch") and declared_kind == kind[: -len("Patch")]:
        kind, patch = declared_kind, True
    # CustomResource records the token from the object's own apiVersion/kind, so token and inputs agree; the
    # token wins where an input is missing or unknown, as the provider fills them from the type.
    if not isinstance(manifest.get("apiVersion"), str) or manifest.get("apiVersion") == UNKNOWN:
        manifest["apiVersion"] = api_version
    if not isinstance(declared_kind, str) or declared_kind == UNKNOWN:
        manifest["kind"] = kind
    return K8sObject(r.urn, manifest, None, f"resource {r.name}", patch)


def _context_objects(ctx: ConformanceContext) -> list[K8sObject]:
    """`collect_objects` once per run: k8s.schema and k8s.crd read the same objects, and neither mutates them.

    Keyed by the number of derived objects, so a check that derives more (none does after helm) is seen.
    """
    cached = ctx.facts.get(_OBJECTS_KEY)
    if cached is None or cached[0] != len(ctx.derived):
        cached = (len(ctx.derived), collect_objects(ctx.plan, ctx.derived))
        ctx.facts[_OBJECTS_KEY] = cached
    objects: list[K8sObject] = cached[1]
    return objects


_OBJECTS_KEY = "k8s.objects"


def collect_objects(plan: Plan, derived: Iterable[DerivedObject]) -> list[K8sObject]:
    """Every Kubernetes object the plan creates: its own resources first, then the rendered ones."""
    out = [o for o in (plan_object(r) for r in plan) if o is not None]
    for d in derived:
        if isinstance(d.manifest, dict):
            # DerivedObject.ref reads metadata as a map; a chart can render anything there.
            ref = d.ref if isinstance(d.manifest.get("metadata"), dict) else f"{d.api_version}/{d.kind}"
            out.append(K8sObject(d.owner, d.manifest, ref, d.source))
    return out
