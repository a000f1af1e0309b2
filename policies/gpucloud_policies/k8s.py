"""Kubernetes objects as the pack sees them: registered resources and objects rendered from charts.

The engine sends the pack only the resources a program registers. A `helm.v3.Release` is one opaque resource,
so the objects its chart renders are invisible to a policy running inside `pulumi preview`. `gpucloud plan`
renders the pinned charts first (conformance, `plan.derived`) and hands those objects to the pack through
``set_derived``; the same checks then run on them, reported against the owning Release. Where nothing was handed
over (the Pulumi CLI, or a plan run without conformance) ``derived()`` is ``None`` and policies list the Releases
whose contents they could not see instead of passing them.

Pod templates are found by kind for the built-in workload kinds and, for any other kind (MPIJob, PyTorchJob,
JobSet, RayCluster, KServe InferenceServices, Argo Workflows, Spark applications, operators' own CRDs), by the
pod-spec finder (``pods``): it walks the whole object for pod-spec-shaped mappings (a ``containers`` list; a
workflow step's ``container`` / ``script``; a Spark driver or executor's ``image`` with its security context),
so a CRD nobody listed here is still checked. Objects inside objects are found too: the items of ``*List`` kinds,
manifests written as YAML strings in ConfigMaps and in ``yaml.ConfigGroup`` / ``yaml/v2.ConfigGroup``
(``yaml``, ``objs``), each yielded as an object of its own (its ``source`` says where it was found).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pulumi_policy import PolicyResource

from .base import UnknownValueError, get, is_list, items, keys, plain, text

# libyaml's parser when PyYAML was built with it (the wheels are), as safe as SafeLoader: the same constructors
# and resolvers, the parsing in C (a ConfigMap's manifests parse in a fifth of the time).
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

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
    """Registered Kubernetes objects, then rendered ones (when handed over), each followed by the objects found
    inside it (List items, YAML-string manifests); ``kinds`` filters by kind."""
    for r in resources:
        group, kind = _kind_of(r.resource_type)
        if not kind or group.startswith("helm.sh"):
            continue
        if group.startswith("yaml"):
            for child in _config_group(r):
                if kinds is None or child.kind in kinds:
                    yield child
            continue
        meta = get(r.props, "metadata")
        name = text(get(meta, "name")) or r.name
        ns = "" if kind in CLUSTER_SCOPED else text(get(meta, "namespace"), "default")
        obj = KObject(r.urn, kind, ns, name, r.props)
        if kinds is None or kind in kinds:
            yield obj
        for child in inner(obj):
            if kinds is None or child.kind in kinds:
                yield child
    for owner, source, manifest in derived() or []:
        kind = text(manifest.get("kind"))
        if not kind:
            continue
        obj = _manifest_object(owner, manifest, source)
        if kinds is None or kind in kinds:
            yield obj
        for child in inner(obj):
            if kinds is None or child.kind in kinds:
                yield child


def _manifest_object(owner: str, manifest: Mapping[str, Any], source: str | None) -> KObject:
    kind = text(manifest.get("kind"))
    meta = manifest.get("metadata") or {}
    meta = meta if isinstance(meta, Mapping) else {}
    ns = "" if kind in CLUSTER_SCOPED else text(meta.get("namespace"), "default")
    return KObject(owner, kind, ns, text(meta.get("name")), manifest, source)


def manifests_in(value: Any) -> list[dict[str, Any]]:
    """Kubernetes manifests written in a YAML (or JSON) string: every document with a ``kind`` and an
    ``apiVersion``; [] for any other string (a config file, a script) or invalid YAML."""
    if not isinstance(value, str) or "kind" not in value or "apiVersion" not in value:
        return []
    try:
        docs = list(yaml.load_all(value, Loader=SAFE_LOADER))
    except yaml.YAMLError:
        return []
    out: list[dict[str, Any]] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            out += [x for x in d["items"] if isinstance(x, dict) and x.get("kind")]
        elif isinstance(d, dict) and isinstance(d.get("kind"), str) and d.get("apiVersion"):
            out.append(d)
    return out


def inner(obj: KObject) -> Iterator[KObject]:
    """Objects held inside an object: the items of a ``*List`` kind, and manifests in a ConfigMap's data."""
    if obj.kind.endswith("List") and obj.kind != "List":
        for i, item in enumerate(items(get(obj.body, "items"))):
            if isinstance(item, Mapping):
                body = plain(item)
                body.setdefault("kind", obj.kind[: -len("List")])
                yield _manifest_object(obj.urn, body, f"{obj.ref} items[{i}]")
    elif obj.kind == "ConfigMap":
        data = get(obj.body, "data")
        for k in keys(data):
            try:
                value = data[k]
            except UnknownValueError:
                continue
            for m in manifests_in(value):
                yield _manifest_object(obj.urn, m, f"{obj.ref} data.{k}")


def _config_group(r: PolicyResource) -> Iterator[KObject]:
    """The objects of a ``yaml.ConfigGroup`` / ``yaml/v2.ConfigGroup`` given inline (``yaml`` strings, ``objs``)."""
    what = r.resource_type.rsplit(":", 1)[-1]
    raw = get(r.props, "yaml")
    docs: list[Mapping[str, Any]] = []
    for y in [raw] if isinstance(raw, str) else items(raw):
        docs += manifests_in(y)
    for o in items(get(r.props, "objs")):
        if isinstance(o, Mapping):
            docs.append(plain(o))
    for d in docs:
        obj = _manifest_object(r.urn, d, f"{what} {r.name}")
        yield obj
        yield from inner(obj)


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


# Pod annotations that hold the pod's AppArmor profile per container (Kubernetes < 1.30 and still honoured).
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


@dataclass(frozen=True)
class PodSpec:
    """One pod-spec-shaped mapping found in an object: where, the spec, and the pod's annotations."""

    path: str
    spec: Any
    annotations: Mapping[str, Any]


def _annotations(holder: Any) -> Mapping[str, Any]:
    ann = get(holder, "metadata", "annotations")
    return ann if isinstance(ann, Mapping) else {}


def pods(obj: KObject) -> list[PodSpec]:
    """Every pod spec of the object, wherever it sits; unknown values raise when read."""
    path = _POD_PATHS.get(obj.kind)
    if path is not None:
        spec = get(obj.body, *path)
        holder = obj.body if len(path) == 1 else get(obj.body, *path[:-1])
        return [PodSpec(".".join(path), spec, _annotations(holder))] if isinstance(spec, Mapping) else []
    if obj.kind in _NO_PODS or obj.kind.endswith("List"):
        return []
    found: list[PodSpec] = []
    for k in keys(obj.body):
        if k not in ("metadata", "status", "apiVersion", "kind"):
            _find(obj.body[k], k, obj.body, found, 0, obj.kind in SPARK_KINDS)
    return found


def pod_specs(obj: KObject) -> list[tuple[str, Any]]:
    """(path, pod spec) for every pod template of the object; unknown values raise when read."""
    return [(p.path, p.spec) for p in pods(obj)]


# Keys under which the Spark operator's SparkApplication keeps the driver and executor pod settings; only in
# its kinds (the GPU operator's ClusterPolicy also has a ``driver`` with an ``image``, which is not a pod).
_SPARK_ROLES = ("driver", "executor")
SPARK_KINDS = frozenset({"SparkApplication", "ScheduledSparkApplication"})


def _shaped(node: Mapping[str, Any], key: str, spark: bool) -> Mapping[str, Any] | None:
    """A pod spec for a mapping shaped like one: a ``containers`` list as is; a workflow step (Argo's
    ``container`` / ``script`` with an ``image``), a Tekton task's ``steps`` (containers), or a Spark driver /
    executor (``image``, ``securityContext``, ``podSecurityContext``, ``hostNetwork``) as the pod spec its
    controller builds."""
    if is_list(get(node, "containers")):
        return node
    for k in ("container", "script"):
        c = get(node, k)
        if isinstance(c, Mapping) and isinstance(get(c, "image"), str):
            rest = {x: node[x] for x in keys(node) if x not in ("container", "script")}
            return {**rest, "containers": [c]}
    steps = [x for x in items(get(node, "steps")) if isinstance(x, Mapping) and isinstance(get(x, "image"), str)]
    if steps:
        return {"containers": steps, "volumes": get(node, "volumes")}
    if spark and key in _SPARK_ROLES:
        container = {"name": key, "image": get(node, "image"), "securityContext": get(node, "securityContext")}
        spec: dict[str, Any] = {"containers": [container, *items(get(node, "sidecars"))]}
        for k in ("hostNetwork", "hostPID", "hostIPC", "volumes", "initContainers"):
            if get(node, k) is not None:
                spec[k] = node[k]
        if get(node, "podSecurityContext") is not None:
            spec["securityContext"] = node["podSecurityContext"]
        return spec
    return None


def _find(node: Any, path: str, parent: Any, found: list[PodSpec], depth: int, spark: bool = False) -> None:
    # Depth 10 reaches JobSet's spec.replicatedJobs[].template.spec.template.spec with room to spare.
    if depth > 10:
        return
    if isinstance(node, Mapping):
        spec = _shaped(node, path.rsplit(".", 1)[-1], spark)
        if spec is not None:
            # A template's annotations sit beside its spec (template.metadata); a step's on itself.
            holder = parent if path.endswith("spec") else node
            found.append(PodSpec(path, spec, _annotations(holder)))
            return
        for k in keys(node):
            if k in ("metadata", "status"):
                continue
            _find(node[k], f"{path}.{k}", node, found, depth + 1, spark)
    elif is_list(node):
        for i, x in enumerate(items(node)):
            _find(x, f"{path}[{i}]", node, found, depth + 1, spark)


def image_repository(image: str) -> str:
    """The repository of an image reference (distribution/reference: ``[registry/]path[:tag][@digest]``), with
    Docker Hub's implicit ``docker.io/`` and ``library/`` written out, so ``nginx`` and
    ``docker.io/library/nginx:1.27`` name the same repository."""
    ref = image.strip().split("@", 1)[0]
    head, _, last = ref.rpartition("/")
    if ":" in last:
        last = last.split(":", 1)[0]
    ref = f"{head}/{last}" if head else last
    first = ref.split("/", 1)[0]
    if "/" not in ref:
        return f"docker.io/library/{ref}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{ref}"
    return ref


def image_digest(image: str) -> str | None:
    """The ``algorithm:hex`` digest an image reference pins, or None."""
    _, _, digest = image.strip().partition("@")
    return digest or None


def images(obj: KObject) -> list[str]:
    """Every container image of every pod spec of the object (unknown values raise)."""
    out: list[str] = []
    for pod in pods(obj):
        for lst in ("containers", "initContainers", "ephemeralContainers"):
            for c in items(get(pod.spec, lst)):
                if isinstance(c, Mapping):
                    out.append(text(get(c, "image")))
    return out
