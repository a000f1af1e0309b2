"""Kubernetes objects as the pack sees them: registered resources and objects rendered from charts.

The engine sends the pack only the resources a program registers. A `helm.v3.Release` is one opaque resource,
so the objects its chart renders are invisible to a policy running inside `pulumi preview`. `gpucloud plan`
renders the pinned charts first (conformance, `plan.derived`) and hands those objects to the pack through
``set_derived``; the same checks then run on them, reported against the owning Release. Where nothing was handed
over (the Pulumi CLI, or a plan run without conformance) ``derived()`` is ``None`` and policies list the Releases
whose contents they could not see instead of passing them.

Pod templates are found by kind for the built-in workload kinds and, for any other kind (MPIJob, PyTorchJob,
JobSet, RayCluster, operators' own CRDs), by walking ``spec`` for objects that hold a ``containers`` list, so a
CRD nobody listed here is still checked.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyResource

from .base import get, is_list, items, keys, text

RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart")

_DERIVED: contextvars.ContextVar[list[tuple[str, str, Mapping[str, Any]]] | None] = contextvars.ContextVar(
    "gpucloud_derived_objects", default=None
)


def set_derived(
    objects: Iterable[tuple[str, str, Mapping[str, Any]]] | None,
) -> contextvars.Token[list[tuple[str, str, Mapping[str, Any]]] | None]:
    """Hand the pack the objects charts render: (owner URN, source "chart x@v", manifest)."""
    return _DERIVED.set(None if objects is None else list(objects))


def reset_derived(token: contextvars.Token[list[tuple[str, str, Mapping[str, Any]]] | None]) -> None:
    _DERIVED.reset(token)


def derived() -> list[tuple[str, str, Mapping[str, Any]]] | None:
    return _DERIVED.get()


@dataclass(frozen=True)
class KObject:
    """One Kubernetes object: ``urn`` is where findings go (the resource, or the Release that renders it)."""

    urn: str
    kind: str
    namespace: str
    name: str
    body: Any  # the manifest (a proxy for registered resources: unknown values raise when read)
    source: str | None = None  # "chart x@v" for rendered objects

    @property
    def ref(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}" + (f" (from {self.source})" if self.source else "")


def _kind_of(resource_type: str) -> tuple[str, str]:
    """("apps/v1", "Deployment") from "kubernetes:apps/v1:Deployment"; ("", "") for non-Kubernetes types."""
    parts = resource_type.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return "", ""
    return parts[1], parts[2]


CLUSTER_SCOPED = {"Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "StorageClass"}


def objects(resources: Iterable[PolicyResource], kinds: set[str] | None = None) -> Iterator[KObject]:
    """Registered Kubernetes objects, then rendered ones (when handed over); ``kinds`` filters by kind."""
    for r in resources:
        group, kind = _kind_of(r.resource_type)
        if not kind or group.startswith("helm.sh") or group == "yaml" or (kinds is not None and kind not in kinds):
            continue
        meta = get(r.props, "metadata")
        name = text(get(meta, "name")) or r.name
        ns = "" if kind in CLUSTER_SCOPED else text(get(meta, "namespace"), "default")
        yield KObject(r.urn, kind, ns, name, r.props)
    for owner, source, manifest in derived() or []:
        kind = text(manifest.get("kind"))
        if not kind or (kinds is not None and kind not in kinds):
            continue
        meta = manifest.get("metadata") or {}
        ns = "" if kind in CLUSTER_SCOPED else text(meta.get("namespace"), "default")
        yield KObject(owner, kind, ns, text(meta.get("name")), manifest, source)


def unseen_releases(resources: Iterable[PolicyResource]) -> list[PolicyResource]:
    """Releases/charts whose rendered objects the pack was not given (always empty offline with conformance)."""
    if derived() is not None:
        return []
    return [r for r in resources if r.resource_type in RELEASE_TYPES]


# Where the built-in kinds keep their pod spec. Other kinds are searched (``pod_specs``).
_POD_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}
# Kinds that never hold a pod template; not searched.
_NO_PODS = {
    "Service",
    "Ingress",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Namespace",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "PrometheusRule",
    "ServiceMonitor",
    "PodMonitor",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "PriorityClass",
    "NodePool",
    "EC2NodeClass",
}


def pod_specs(obj: KObject) -> list[tuple[str, Any]]:
    """(path, pod spec) for every pod template of the object; unknown values raise when read."""
    path = _POD_PATHS.get(obj.kind)
    if path is not None:
        spec = get(obj.body, *path)
        return [(".".join(path), spec)] if isinstance(spec, Mapping) else []
    if obj.kind in _NO_PODS:
        return []
    found: list[tuple[str, Any]] = []
    _search(get(obj.body, "spec"), "spec", found, 0)
    return found


def _search(node: Any, path: str, found: list[tuple[str, Any]], depth: int) -> None:
    # Depth 8 reaches JobSet's spec.replicatedJobs[].template.spec.template.spec with room to spare.
    if depth > 8:
        return
    if isinstance(node, Mapping):
        if is_list(get(node, "containers")):
            found.append((path, node))
            return
        for k in keys(node):
            if k in ("metadata", "status"):
                continue
            _search(node[k], f"{path}.{k}", found, depth + 1)
    elif is_list(node):
        for i, x in enumerate(items(node)):
            _search(x, f"{path}[{i}]", found, depth + 1)
