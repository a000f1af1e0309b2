"""What pulumi-kubernetes registers for its provider-side (remote) components, computed offline.

`yaml/v2:ConfigFile`, `yaml/v2:ConfigGroup`, `kustomize/v2:Directory` and `helm.sh/v4:Chart` are constructed
inside the provider, so under mocks the program registers the component and nothing below it. The provider
parses the manifests (or runs kustomize / Helm), applies the default namespace to namespaced kinds and registers
one child per object, named ``<prefix>:<namespace>/<name>`` (``<prefix>:<name>`` for cluster-scoped objects),
prefix defaulting to the component's name, parent the component, with the `data`/`stringData` of a v1 Secret
marked secret (pulumi-kubernetes provider/pkg/provider/yaml/v2/yaml.go Register/Normalize,
kustomize/v2/directory.go, helm/v4/chart.go). This module reproduces that from the component's inputs.
"""

from __future__ import annotations

import glob
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpucloud.fileio import decode_text
from gpucloud.plan.model import is_unknown

CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
KUSTOMIZE_DIRECTORY = "kubernetes:kustomize/v2:Directory"
HELM_V4_CHART = "kubernetes:helm.sh/v4:Chart"
EXPANDED_TYPES = frozenset({CONFIG_FILE, CONFIG_GROUP, KUSTOMIZE_DIRECTORY, HELM_V4_CHART})
DEFAULT_NAMESPACE = "default"
KUBECTL_ENV = "GPUCLOUD_KUBECTL"

_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# pulumi-kubernetes kinds.Kind.Namespaced(): built-in kinds whose scope the provider knows without a cluster.
_NAMESPACED = frozenset(
    [
        "Binding",
        "ConfigMap",
        "ControllerRevision",
        "CronJob",
        "CSIStorageCapacity",
        "DaemonSet",
        "Deployment",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "HorizontalPodAutoscaler",
        "Ingress",
        "Job",
        "Lease",
        "LimitRange",
        "NetworkPolicy",
        "PersistentVolumeClaim",
        "Pod",
        "PodDisruptionBudget",
        "PodTemplate",
        "ReplicaSet",
        "ReplicationController",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "Secret",
        "Service",
        "ServiceAccount",
        "StatefulSet",
    ]
)
_CLUSTER_SCOPED = frozenset(
    [
        "APIService",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "CSIDriver",
        "CSINode",
        "CustomResourceDefinition",
        "FlowSchema",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PodSecurityPolicy",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "RuntimeClass",
        "StorageClass",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
    ]
)
_BUILTIN_GROUPS = frozenset({"", "apps", "batch", "policy", "autoscaling"})


class ExpansionError(Exception):
    """The provider would fail constructing the component (unreadable file, bad YAML, kustomize error)."""


@dataclass
class Child:
    type: str
    name: str
    inputs: dict[str, Any]
    secret_keys: tuple[str, ...] = ()
    depends_on: list[int] = field(default_factory=list)  # indexes of earlier children


@dataclass
class Expansion:
    children: list[Child]
    warnings: list[str]


def type_token(api_version: str, kind: str) -> str:
    """kubernetes:<group>/<version>:<Kind>, the core group spelled `core` as the provider's tokens do."""
    group, _, version = api_version.rpartition("/")
    return f"kubernetes:{group or 'core'}/{version}:{kind}"


def find_kubectl() -> Path | None:
    """kubectl: $GPUCLOUD_KUBECTL, the one `make` installs beside this interpreter, the per-user tool cache, PATH;
    else the pinned, checksum-verified download into that cache on first use (gpucloud/tools.py)."""
    from gpucloud import tools

    return tools.find("kubectl", KUBECTL_ENV)


def _has_unknown(value: Any) -> bool:
    if is_unknown(value):
        return True
    if isinstance(value, Mapping):
        return any(_has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unknown(v) for v in value)
    return False


def _decode(text: str, source: str) -> list[dict[str, Any]]:
    try:
        docs = list(yaml.load_all(text, Loader=_YAML_LOADER))
    except yaml.YAMLError as exc:
        raise ExpansionError(f"decoding YAML from {source}: {exc}") from None
    out: list[dict[str, Any]] = []
    for doc in docs:
        if not doc:
            continue
        if not isinstance(doc, dict):
            raise ExpansionError(f"{source}: a manifest document must be a mapping, got {type(doc).__name__}")
        out.append(doc)
    return out


def _read_files(patterns: list[str], base: Path, use_glob: bool) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    for pattern in patterns:
        if "://" in pattern:
            raise ExpansionError(f"{pattern}: the offline plan reads manifests from disk only; vendor the file")
        paths = sorted(glob.glob(str(base / pattern))) if use_glob and any(c in pattern for c in "*?[") else []
        for path in paths or [str(base / pattern)]:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise ExpansionError(f"reading YAML file from disk: {exc.strerror}: {pattern}") from None
            objs.extend(_decode(decode_text(data, f"YAML file {pattern}", ExpansionError), pattern))
    return objs


def _kustomize(directory: str, base: Path) -> list[dict[str, Any]]:
    kubectl = find_kubectl()
    if kubectl is None:
        raise ExpansionError(
            f"no kubectl to run kustomize on {directory}: run `gpucloud tools install` or set ${KUBECTL_ENV}"
        )
    target = base / directory
    done = subprocess.run(
        [str(kubectl), "kustomize", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(base)},
    )
    if done.returncode != 0:
        raise ExpansionError(f"kustomize build error: {done.stderr.strip()}")
    return _decode(done.stdout, f"kustomize {directory}")


def _expand_lists(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for obj in objs:
        if str(obj.get("kind", "")).endswith("List") and isinstance(obj.get("items"), list):
            out.extend(_expand_lists([i for i in obj["items"] if isinstance(i, dict)]))
        else:
            out.append(obj)
    return out


def _namespaced(obj: Mapping[str, Any], objs: list[dict[str, Any]]) -> bool | None:
    api_version = str(obj.get("apiVersion", ""))
    kind = str(obj.get("kind", ""))
    group = api_version.rpartition("/")[0]
    if group in _BUILTIN_GROUPS or group.endswith(".k8s.io"):
        if kind in _NAMESPACED:
            return True
        if kind in _CLUSTER_SCOPED:
            return False
    for crd in objs:
        if crd.get("kind") == "CustomResourceDefinition":
            spec = crd.get("spec") or {}
            if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
                return spec.get("scope") == "Namespaced"
    return None


def normalize_and_name(objs: list[dict[str, Any]], prefix: str, default_namespace: str, component: str) -> Expansion:
    """Children the provider registers for these objects (Normalize + Register in yaml/v2)."""
    objs = _expand_lists(objs)
    warnings: list[str] = []
    unresolved: list[str] = []
    children: list[Child] = []
    index: dict[tuple[str, str], int] = {}
    for obj in objs:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        raw_metadata = obj.get("metadata")
        metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
        if not api_version or not kind:
            raise ExpansionError(f"{component}: Kubernetes resources require a kind and apiVersion: {obj!r:.100}")
        if not metadata.get("name"):
            raise ExpansionError(f"{component}: Kubernetes resources require a .metadata.name: {obj!r:.100}")
        obj = dict(obj)
        if api_version.startswith("core/"):
            obj["apiVersion"] = api_version = api_version[len("core/") :]
        if not metadata.get("namespace"):
            scope = _namespaced(obj, objs)
            if scope is None:
                unresolved.append(f"{api_version}, Kind={kind}")
            elif scope:
                metadata = {**metadata, "namespace": default_namespace}
                obj["metadata"] = metadata
        name = str(metadata["name"])
        ns = metadata.get("namespace")
        resource_name = f"{ns}/{name}" if ns else name
        if prefix:
            resource_name = f"{prefix}:{resource_name}"
        secret_keys: tuple[str, ...] = ()
        if f"{api_version}/{kind}" == "v1/Secret":
            secret_keys = tuple(k for k in ("data", "stringData") if k in obj)
        child = Child(type_token(str(api_version), str(kind)), resource_name, obj, secret_keys)
        # The provider orders registration by dependency (cli-utils graph): a namespace before what lives in
        # it, a CRD before its custom resources.
        if ns and ("Namespace", str(ns)) in index:
            child.depends_on.append(index[("Namespace", str(ns))])
        group = str(api_version).rpartition("/")[0]
        if ("CRD", f"{group}/{kind}") in index:
            child.depends_on.append(index[("CRD", f"{group}/{kind}")])
        if kind == "Namespace":
            index[("Namespace", name)] = len(children)
        if kind == "CustomResourceDefinition":
            spec = obj.get("spec") or {}
            index[("CRD", f"{spec.get('group')}/{(spec.get('names') or {}).get('kind')}")] = len(children)
        children.append(child)
    if unresolved:
        warnings.append(
            f"{component}: Unable to determine whether the following kinds are namespaced without a reachable "
            f"cluster or a matching CustomResourceDefinition, so they are rendered without a namespace: "
            f"{', '.join(dict.fromkeys(unresolved))}"
        )
    return Expansion(children, warnings)


def expand(type_: str, name: str, inputs: Mapping[str, Any], base: Path, helm_render: Any = None) -> Expansion:
    """The children of one provider-side component, from its inputs as registered (plaintext view)."""
    component = f"{type_}::{name}"
    if _has_unknown(dict(inputs)):
        return Expansion([], [f"{component} -- Required input properties have unknown values. Preview is incomplete."])
    prefix = inputs.get("resourcePrefix")
    prefix = name if prefix is None else str(prefix)
    namespace = DEFAULT_NAMESPACE
    if type_ == CONFIG_FILE:
        objs = _read_files([str(inputs.get("file") or "")], base, use_glob=False)
    elif type_ == CONFIG_GROUP:
        files = inputs.get("files") or []
        files = [files] if isinstance(files, str) else list(files)
        objs = _read_files([str(f) for f in files], base, use_glob=True)
        if inputs.get("yaml"):
            text = inputs["yaml"]
            for chunk in [text] if isinstance(text, str) else list(text):
                objs.extend(_decode(str(chunk), f"{component} yaml"))
        objs.extend(dict(o) for o in inputs.get("objs") or [] if isinstance(o, Mapping))
    elif type_ == KUSTOMIZE_DIRECTORY:
        objs = _kustomize(str(inputs.get("directory") or ""), base)
        namespace = str(inputs.get("namespace") or DEFAULT_NAMESPACE)
    elif type_ == HELM_V4_CHART:
        if helm_render is None:
            raise ExpansionError(f"{component}: no Helm renderer")
        namespace = str(inputs.get("namespace") or DEFAULT_NAMESPACE)
        objs = helm_render(inputs, name, namespace)
    else:
        raise ExpansionError(f"{component}: not a provider-side component gpucloud expands")
    return normalize_and_name(objs, prefix, namespace, component)
