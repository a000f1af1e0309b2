"""The Kubernetes objects a plan puts on the cluster, registered or derived, and the pods each one runs.

One view over `kubernetes:*` resources the program registers and the objects other checks derive (rendered
charts), so the scheduling check reads a DaemonSet the same way whether a chart renders it or the program
declares it. Pod templates are found in the built-in workload kinds and in any custom resource whose spec holds
PodTemplateSpecs with replica counts (Kubeflow MPIJob / PyTorchJob / TFJob, JobSet, LeaderWorkerSet, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import package_data
from gpucloud.conformance import ConformanceContext
from gpucloud.plan.model import ResourceRecord, is_unknown

VENDOR_CHARTS = package_data.CHARTS
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
_K8S_TYPE = re.compile(r"^kubernetes:(?P<group>[^:]+)/(?P<version>[^:/]+):(?P<kind>[A-Za-z0-9]+)$")
# Types the pulumi-kubernetes provider registers that are not API objects.
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml", "kubernetes:kustomize", "kubernetes:index")


@dataclass
class KObject:
    """A Kubernetes object with where it comes from: its plan URN, or the owner's URN and `ref` when derived."""

    urn: str
    manifest: dict[str, Any]
    source: str | None = None  # "chart x@v" for derived objects
    derived: bool = False
    # Helm installs a namespaced object that names no namespace into the release's namespace.
    default_namespace: str | None = None

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", ""))

    @property
    def api_version(self) -> str:
        return str(self.manifest.get("apiVersion", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        m = self.manifest.get("metadata")
        return m if isinstance(m, dict) else {}

    @property
    def name(self) -> str:
        n = self.metadata.get("name")
        return str(n) if isinstance(n, str) and not is_unknown(n) else ""

    @property
    def namespace(self) -> str:
        n = self.metadata.get("namespace")
        if not isinstance(n, str | None):
            return "<invalid>"
        return str(n) if isinstance(n, str) and not is_unknown(n) else (self.default_namespace or "default")

    @property
    def spec(self) -> dict[str, Any]:
        s = self.manifest.get("spec")
        return s if isinstance(s, dict) else {}

    @property
    def ref(self) -> str | None:
        """A derived object's "apiVersion/kind namespace/name" (Finding.object); None for plan resources."""
        if not self.derived:
            return None
        ns = self.metadata.get("namespace")
        where = f"{ns}/{self.name}" if ns else self.name
        return f"{self.api_version}/{self.kind} {where}"

    @property
    def label(self) -> str:
        return (
            f"{self.kind} {self.namespace}/{self.name}"
            if self.metadata.get("namespace")
            else f"{self.kind} {self.name}"
        )


def record_manifest(r: ResourceRecord) -> dict[str, Any] | None:
    """A plan resource of a Kubernetes type as the manifest the provider sends (apiVersion/kind from the type)."""
    if not r.type.startswith("kubernetes:") or r.type.startswith(_NOT_OBJECTS):
        return None
    m = _K8S_TYPE.match(r.type)
    if m is None:
        return None
    group, version, kind = m.group("group"), m.group("version"), m.group("kind")
    manifest = dict(r.inputs)
    manifest.setdefault("apiVersion", version if group == "core" else f"{group}/{version}")
    manifest.setdefault("kind", kind)
    if not isinstance(manifest.get("metadata"), dict):
        manifest["metadata"] = {}
    if not manifest["metadata"].get("name") or is_unknown(manifest["metadata"].get("name")):
        # Autonamed: the provider names it after the resource (plus a suffix nobody selects on).
        manifest["metadata"] = {**manifest["metadata"], "name": r.name}
    return manifest


def objects(ctx: ConformanceContext) -> list[KObject]:
    """Every Kubernetes object of the plan, then every derived one (cached on the context)."""
    cached = ctx.facts.get("_scheduling_objects")
    if cached is not None and cached[0] == len(ctx.derived):
        return list(cached[1])
    out: list[KObject] = []
    for r in ctx.plan.resources:
        manifest = record_manifest(r)
        if manifest is not None:
            out.append(KObject(r.urn, manifest))
    release_ns = {
        r.urn: str(r.inputs.get("namespace"))
        for r in ctx.plan.of_type(HELM_RELEASE)
        if isinstance(r.inputs.get("namespace"), str) and not is_unknown(r.inputs.get("namespace"))
    }
    for d in ctx.derived:
        if isinstance(d.manifest, dict):
            out.append(KObject(d.owner, d.manifest, d.source, derived=True, default_namespace=release_ns.get(d.owner)))
    ctx.facts["_scheduling_objects"] = (len(ctx.derived), out)
    return out


def of_kind(objs: list[KObject], *kinds: str) -> list[KObject]:
    return [o for o in objs if o.kind in kinds]


# -- pod templates ------------------------------------------------------------------------------------------


@dataclass
class PodSet:
    """Pods one object runs from one template: `count` of them (None: not fixed, e.g. a DaemonSet)."""

    obj: KObject
    path: str  # field path of the template's pod spec, for findings
    role: str  # "" or the replica type of a CR ("Worker", "Launcher")
    template: dict[str, Any]  # the PodTemplateSpec (metadata + spec)
    count: int | None
    max_count: int | None  # with an autoscaler (HPA / KEDA) on the object: the most it scales to
    gang: bool  # all pods must run together (Job parallelism, MPI/PyTorch replicas)

    @property
    def pod_spec(self) -> dict[str, Any]:
        s = self.template.get("spec")
        return clean_pod_spec(s) if isinstance(s, dict) else {}

    @property
    def labels(self) -> dict[str, str]:
        m = self.template.get("metadata")
        labels = m.get("labels") if isinstance(m, dict) else None
        return {str(k): str(v) for k, v in (labels or {}).items()} if isinstance(labels, dict) else {}

    @property
    def name(self) -> str:
        return f"{self.obj.label}" + (f" [{self.role}]" if self.role else "")


def clean_pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The pod spec with fields of a shape the API would reject dropped, so the scheduling model can read the
    rest (the schema check reports the bad fields)."""
    out = dict(spec)
    for key, kind in (("nodeSelector", dict), ("affinity", dict), ("overhead", dict)):
        if key in out and not isinstance(out[key], kind):
            del out[key]
    for key in ("tolerations", "containers", "initContainers", "volumes"):
        if key in out:
            items = out[key] if isinstance(out[key], list) else []
            out[key] = [i for i in items if isinstance(i, dict)]
    for key in ("containers", "initContainers"):
        cleaned = []
        for c in out.get(key) or []:
            res = c.get("resources")
            if res is not None and not (
                isinstance(res, dict) and all(isinstance(res.get(k) or {}, dict) for k in ("limits", "requests"))
            ):
                c = {k: v for k, v in c.items() if k != "resources"}
            cleaned.append(c)
        if key in out:
            out[key] = cleaned
    return out


def _int(value: Any, default: int | None) -> int | None:
    if isinstance(value, bool) or value is None or is_unknown(value):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def pod_sets(obj: KObject) -> list[PodSet]:
    """The pod templates an object runs, with how many pods each (built-in kinds and template-bearing CRs)."""
    spec = obj.spec
    kind = obj.kind
    if kind == "Pod":
        return [PodSet(obj, "spec", "", {"metadata": obj.metadata, "spec": spec}, 1, 1, False)]
    if kind in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"):
        n = _int(spec.get("replicas"), 1)
        return [PodSet(obj, "spec.template.spec", "", _template(spec.get("template")), n, n, False)]
    if kind == "DaemonSet":
        return [PodSet(obj, "spec.template.spec", "", _template(spec.get("template")), None, None, False)]
    if kind == "Job":
        n = _int(spec.get("parallelism"), 1)
        completions = _int(spec.get("completions"), None)
        if completions is not None and n is not None:
            n = min(n, completions)
        # An Indexed Job with parallelism = completions is how torchrun / MPI gangs run on plain Jobs.
        gang = spec.get("completionMode") == "Indexed" and (n or 0) > 1
        return [PodSet(obj, "spec.template.spec", "", _template(spec.get("template")), n, n, gang)]
    if kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec") or {}
        n = _int(job.get("parallelism"), 1)
        return [PodSet(obj, "spec.jobTemplate.spec.template.spec", "", _template(job.get("template")), n, n, False)]
    return list(_custom_pod_sets(obj))


def _template(t: Any) -> dict[str, Any]:
    return t if isinstance(t, dict) else {}


def _custom_pod_sets(obj: KObject) -> Iterator[PodSet]:
    """Replica specs of operator CRs: any {replicas?, template: {spec: {containers}}} under spec."""
    specs: list[tuple[str, str, Mapping[str, Any]]] = []

    def walk(node: Any, path: str, role: str, depth: int) -> None:
        if depth > 6 or not isinstance(node, Mapping):
            return
        t = node.get("template")
        if isinstance(t, Mapping) and isinstance(t.get("spec"), Mapping) and t["spec"].get("containers"):
            specs.append((path, role, node))
            return
        for k, v in node.items():
            if isinstance(v, Mapping):
                walk(v, f"{path}.{k}", str(k), depth + 1)
            elif isinstance(v, list):
                for i, item in enumerate(v):
                    walk(item, f"{path}.{k}[{i}]", str(k), depth + 1)

    walk(obj.spec, "spec", "", 0)
    # Operators start every replica type of a job together (gang): a worker stranded strands the job.
    gang = len(specs) > 1 or any((_int(s.get("replicas"), 1) or 0) > 1 for _, _, s in specs)
    for path, role, s in specs:
        n = _int(s.get("replicas"), 1)
        yield PodSet(obj, f"{path}.template.spec", role, _template(s.get("template")), n, n, gang)


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against known pod labels (an empty selector matches everything)."""
    if not isinstance(selector, Mapping):
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(str(k)) != str(v):
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = str(e.get("key")), e.get("operator"), [str(v) for v in e.get("values") or []]
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def containers(pod_spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        c for c in [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])] if isinstance(c, dict)
    ]


def image_of(container: Mapping[str, Any]) -> str:
    img = container.get("image")
    return str(img) if isinstance(img, str) and not is_unknown(img) else ""


def image_tag(image: str) -> str:
    """The tag of an image reference (digest dropped): "registry/x/cluster-autoscaler:v1.32.0" -> "v1.32.0"."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def command_words(container: Mapping[str, Any]) -> list[str]:
    words: list[str] = []
    for k in ("command", "args"):
        for w in container.get(k) or []:
            if isinstance(w, str):
                words.append(w)
    return words


def releases(ctx: ConformanceContext, chart_suffix: str) -> list[ResourceRecord]:
    """helm.v3.Release resources of a chart (by name or OCI / repo path ending in it)."""
    return [
        r for r in ctx.plan.of_type(HELM_RELEASE) if str(r.inputs.get("chart") or "").rstrip("/").endswith(chart_suffix)
    ]
