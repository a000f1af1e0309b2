"""The nodes each pool of a plan would bring up: labels, taints, allocatable resources, size limits.

Read from raw resources, not from gpucloud's components: EKS managed node groups (labels, taints, instance
types, scaling), self-managed Auto Scaling groups with launch templates (labels and taints from the user data:
nodeadm NodeConfig, bootstrap.sh kubelet flags or Bottlerocket TOML), and Karpenter NodePools (template labels,
taints, requirements, limits) with their EC2NodeClass. Instance figures come from gpucloud.catalog.

Who sets which label matters: the kubelet and EKS / Karpenter set the well-known ones (instance type, zone,
arch, capacity type, node group / node pool); everything NFD, GFD and the GPU Operator add is added later by
gpucloud.conformance.addons, and only where those components can actually run.

Allocatable CPU and memory subtract the EKS AMI's kube-reserved (CPU: 6% of the first core, 1% of the
second, 0.5% of the next two, 0.25% above four; memory: 255 MiB + 11 MiB per pod at the max-pods EKS caps to,
110 below 30 vCPUs and 250 above) and the 100 MiB hard-eviction threshold (awslabs/amazon-eks-ami
nodeadm kubelet defaults). DaemonSet requests are not subtracted.
"""

from __future__ import annotations

import base64
import binascii
import email
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpucloud.catalog import InstanceSpec, family_of, get_catalog
from gpucloud.catalog.allocatable import reserve
from gpucloud.conformance import ConformanceContext
from gpucloud.conformance.inventory import KObject, objects, pod_sets
from gpucloud.conformance.kube import NodeLabels, Taint, match_requirement, selector_fits, untolerated
from gpucloud.plan.model import ResourceRecord, is_unknown

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EKS_CLUSTER = "aws:eks/cluster:Cluster"

GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
NEURON = "aws.amazon.com/neuron"
NEURONCORE = "aws.amazon.com/neuroncore"
NEURONDEVICE = "aws.amazon.com/neurondevice"

_EKS_EFFECT = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
_EKS_CAPACITY = {"ON_DEMAND": "ON_DEMAND", "SPOT": "SPOT", "CAPACITY_BLOCK": "CAPACITY_BLOCK"}
_GRAVITON = re.compile(r"^[a-z]+\d+g[a-z]*$")


@dataclass
class NodeVariant:
    """One kind of node a pool can launch: an instance type, with its labels and resources."""

    instance_type: str | None
    spec: InstanceSpec | None
    labels: NodeLabels
    allocatable: dict[str, float | None]  # cpu (cores), memory (bytes), pods; devices added by plugins
    efa_attached: bool  # EFA interfaces on the instance (launch template / Karpenter)
    providers: dict[str, str] = field(default_factory=dict)  # label or resource -> the component that sets it

    @property
    def nvidia_gpus(self) -> int:
        s = self.spec
        return s.accelerator_count if s is not None and s.is_gpu and s.manufacturer == "nvidia" else 0

    @property
    def neuron_devices(self) -> int:
        s = self.spec
        return s.accelerator_count if s is not None and s.manufacturer == "aws" else 0

    @property
    def efa_devices(self) -> int:
        return self.spec.efa_interfaces if self.spec is not None and self.efa_attached else 0


@dataclass
class Pool:
    """A set of nodes that scale together: a managed node group, a self-managed ASG or a Karpenter NodePool."""

    urn: str
    name: str
    kind: str  # "managed node group" | "self-managed ASG" | "Karpenter NodePool"
    variants: list[NodeVariant]
    taints: list[Taint]
    taints_open: bool = False  # user data unknown at plan time: more taints may exist
    min_size: int | None = None
    max_size: int | None = None
    tags: dict[str, str] = field(default_factory=dict)
    ami: str = ""  # amiType / AMI family ("AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA", "bottlerocket")
    obj_ref: str | None = None  # derived NodePool's object ref
    node_class: KObject | None = None
    notes: list[str] = field(default_factory=list)
    registered_labels: dict[str, str] = field(default_factory=dict)  # what the kubelet registers from user data
    # Taints nodes register with and a DaemonSet of the plan removes once it has run there (see startup_taints).
    startup_taints: list[Taint] = field(default_factory=list)

    @property
    def types_field(self) -> str:
        """The input that chooses this pool's instance types (for findings about its nodes)."""
        return {
            "managed node group": "instanceTypes",
            "self-managed ASG": "mixedInstancesPolicy.launchTemplate.overrides",
        }.get(self.kind, "spec.template.spec.requirements")

    @property
    def nvidia(self) -> bool:
        return any(v.nvidia_gpus for v in self.variants)

    @property
    def neuron(self) -> bool:
        return any(v.neuron_devices for v in self.variants)

    @property
    def efa(self) -> bool:
        return any(v.efa_devices for v in self.variants)

    @property
    def accelerated(self) -> bool:
        return self.nvidia or self.neuron

    @property
    def bottlerocket_nvidia(self) -> bool:
        # Bottlerocket's NVIDIA variants run the NVIDIA device plugin in the host OS (settings.kubelet-device-
        # plugins.nvidia), so nvidia.com/gpu is advertised without a DaemonSet.
        a = self.ami.lower()
        return "bottlerocket" in a and ("nvidia" in a or self.nvidia)


# -- plan helpers -------------------------------------------------------------------------------------------


def _known(v: Any) -> bool:
    return v is not None and not is_unknown(v)


def _num(v: Any) -> int | None:
    if isinstance(v, bool) or not _known(v):
        return None
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def _dep(plan_index: dict[str, ResourceRecord], r: ResourceRecord, prop: str, type_: str) -> list[ResourceRecord]:
    return [
        plan_index[u] for u in r.property_dependencies.get(prop, []) if u in plan_index and plan_index[u].type == type_
    ]


def cluster_name(ctx: ConformanceContext) -> str | None:
    for r in ctx.plan.of_type(EKS_CLUSTER):
        n = r.inputs.get("name")
        if isinstance(n, str) and _known(n):
            return n
    return None


def base_variant(instance_type: str | None, labels: NodeLabels, efa_attached: bool) -> NodeVariant:
    spec = get_catalog().find(instance_type) if instance_type else None
    alloc: dict[str, float | None] = {"cpu": None, "memory": None, "pods": None}
    if spec is not None:
        r_cpu, r_mem, max_pods = reserve(spec)
        alloc = {"cpu": spec.vcpu - r_cpu, "memory": spec.memory_gib * 2**30 - r_mem, "pods": float(max_pods)}
    providers = {}
    if instance_type:
        labels.add("node.kubernetes.io/instance-type", instance_type)
        labels.add("beta.kubernetes.io/instance-type", instance_type)
        arch = "arm64" if _GRAVITON.match(family_of(instance_type)) else "amd64"
        labels.add("kubernetes.io/arch", arch)
        labels.add("beta.kubernetes.io/arch", arch)
    else:
        labels.add("node.kubernetes.io/instance-type", None)
        labels.add("kubernetes.io/arch", None)
    labels.add("kubernetes.io/os", "linux")
    labels.add("beta.kubernetes.io/os", "linux")
    labels.add("kubernetes.io/hostname", None)
    for k in ("node.kubernetes.io/instance-type", "kubernetes.io/arch", "kubernetes.io/os", "kubernetes.io/hostname"):
        providers[k] = "kubelet"
    return NodeVariant(instance_type, spec, labels, alloc, efa_attached, providers)


def _zones(ctx: ConformanceContext, r: ResourceRecord, prop: str) -> frozenset[str] | None:
    index = ctx.plan.by_urn()
    zones = set()
    for u in r.property_dependencies.get(prop, []):
        sub = index.get(u)
        if sub is None or sub.type != "aws:ec2/subnet:Subnet":
            continue
        az = sub.inputs.get("availabilityZone")
        if not isinstance(az, str) or not _known(az):
            return None
        zones.add(az)
    return frozenset(zones) or None


# -- user data ----------------------------------------------------------------------------------------------


@dataclass
class Bootstrap:
    labels: dict[str, str]
    taints: list[Taint]
    known: bool  # False: the user data is unknown at plan time (computed from cluster outputs)
    full: bool  # the user data joins the cluster itself (custom AMI / self-managed)


def parse_user_data(value: Any) -> Bootstrap:
    """Labels and taints a node registers with, from launch-template user data (base64 or plain text)."""
    if not _known(value):
        return Bootstrap({}, [], value is None, False) if value is None else Bootstrap({}, [], False, True)
    text = str(value)
    try:
        decoded = base64.b64decode(text, validate=True).decode()
        text = decoded
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    full = False
    parts: list[tuple[str, str]] = []
    if text.lstrip().startswith("MIME-Version") or "Content-Type: multipart" in text[:400]:
        msg = email.message_from_string(text)
        for part in msg.walk():
            if part.is_multipart():
                continue
            payload = part.get_payload(decode=True)
            body = payload.decode(errors="replace") if isinstance(payload, bytes) else str(part.get_payload())
            parts.append((part.get_content_type(), body))
    else:
        parts.append(("text/plain", text))
    for ctype, body in parts:
        if ctype == "application/node.eks.aws" or "kind: NodeConfig" in body:
            for doc in _yaml_docs(body):
                spec = doc.get("spec") if isinstance(doc, dict) else None
                if not isinstance(spec, dict):
                    continue
                full = full or bool(spec.get("cluster"))
                kubelet = spec.get("kubelet") or {}
                for flag in kubelet.get("flags") or []:
                    _flags(str(flag), labels, taints)
                for t in ((kubelet.get("config") or {}).get("registerWithTaints")) or []:
                    taints.append(Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", ""))))
        elif "[settings" in body:
            full = full or _bottlerocket(body, labels, taints)
        else:
            full = full or "bootstrap.sh" in body or "nodeadm" in body
            _flags(body, labels, taints)
    return Bootstrap(labels, taints, True, full)


def _yaml_docs(body: str) -> list[Any]:
    try:
        return list(yaml.safe_load_all(body))
    except yaml.YAMLError:
        return []


def _flags(text: str, labels: dict[str, str], taints: list[Taint]) -> None:
    # kubelet flags, also inside bootstrap.sh --kubelet-extra-args '...'
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        words = text.split()
    expanded: list[str] = []
    for w in words:
        expanded += w.split() if w.startswith("--") and " --" in w else [w]
    for i, w in enumerate(expanded):
        for flag in ("--node-labels", "--register-with-taints"):
            value = None
            if w.startswith(flag + "="):
                value = w[len(flag) + 1 :]
            elif w == flag and i + 1 < len(expanded):
                value = expanded[i + 1]
            if value is None:
                continue
            for item in filter(None, value.split(",")):
                if flag == "--node-labels":
                    k, _, v = item.partition("=")
                    labels[k] = v
                else:
                    kv, _, effect = item.rpartition(":")
                    k, _, v = kv.partition("=")
                    taints.append(Taint(k, v, effect))


def _bottlerocket(body: str, labels: dict[str, str], taints: list[Taint]) -> bool:
    try:
        data = tomllib.loads(body)
    except tomllib.TOMLDecodeError:
        return False
    k8s = (data.get("settings") or {}).get("kubernetes") or {}
    for k, v in (k8s.get("node-labels") or {}).items():
        labels[str(k)] = str(v)
    for k, vs in (k8s.get("node-taints") or {}).items():
        for v in vs if isinstance(vs, list) else [vs]:
            value, _, effect = str(v).rpartition(":")
            taints.append(Taint(str(k), value, effect))
    return bool(k8s.get("cluster-name") or k8s.get("api-server"))


def _lt_efa(lt: ResourceRecord | None) -> bool:
    if lt is None:
        return False
    return any(
        isinstance(n, dict) and n.get("interfaceType") in ("efa", "efa-only")
        for n in lt.inputs.get("networkInterfaces") or []
    )


# -- pools --------------------------------------------------------------------------------------------------


def _managed(ctx: ConformanceContext, r: ResourceRecord, index: dict[str, ResourceRecord]) -> Pool:
    lts = _dep(index, r, "launchTemplate", LAUNCH_TEMPLATE)
    lt = lts[0] if lts else None
    types = [t for t in r.inputs.get("instanceTypes") or [] if isinstance(t, str) and _known(t)]
    if not types and lt is not None and _known(lt.inputs.get("instanceType")):
        types = [str(lt.inputs["instanceType"])]
    boot = parse_user_data(lt.inputs.get("userData")) if lt is not None else Bootstrap({}, [], True, False)
    name = r.inputs.get("nodeGroupName")
    capacity = _EKS_CAPACITY.get(str(r.inputs.get("capacityType") or "ON_DEMAND"), "ON_DEMAND")
    zones = _zones(ctx, r, "subnetIds")
    static = {str(k): str(v) for k, v in (r.inputs.get("labels") or {}).items() if _known(v)}
    variants: list[NodeVariant] = []
    type_options: list[str | None] = [*types] or [None]
    for t in type_options:
        labels = NodeLabels()
        for k, val in {**boot.labels, **static}.items():
            labels.add(k, val)
        labels.add("eks.amazonaws.com/nodegroup", str(name) if _known(name) else None)
        labels.add("eks.amazonaws.com/capacityType", capacity)
        labels.add("eks.amazonaws.com/nodegroup-image", None)
        labels.add("topology.kubernetes.io/zone", zones)
        labels.add("topology.kubernetes.io/region", ctx.plan.config.get("aws:region") or None)
        labels.open = not boot.known
        v = base_variant(t, labels, _lt_efa(lt))
        if "WINDOWS" in str(r.inputs.get("amiType") or ""):
            v.labels.values["kubernetes.io/os"] = frozenset({"windows"})
        for k in ("eks.amazonaws.com/nodegroup", "eks.amazonaws.com/capacityType"):
            v.providers[k] = "EKS managed node group"
        variants.append(v)
    taints = [
        Taint(
            str(t.get("key", "")),
            str(t.get("value") or ""),
            _EKS_EFFECT.get(str(t.get("effect")), str(t.get("effect"))),
        )
        for t in r.inputs.get("taints") or []
        if isinstance(t, dict)
    ] + boot.taints
    scaling = r.inputs.get("scalingConfig") or {}
    pool = Pool(
        r.urn,
        str(name) if _known(name) else r.name,
        "managed node group",
        variants,
        taints,
        taints_open=not boot.known,
        min_size=_num(scaling.get("minSize")),
        max_size=_num(scaling.get("maxSize")),
        tags={str(k): str(v) for k, v in (r.inputs.get("tags") or {}).items()},
        ami=str(r.inputs.get("amiType") or ""),
    )
    if not types:
        pool.notes.append("instance types unknown at plan time")
    return pool


def _self_managed(ctx: ConformanceContext, r: ResourceRecord, index: dict[str, ResourceRecord]) -> Pool:
    lts = _dep(index, r, "mixedInstancesPolicy", LAUNCH_TEMPLATE) + _dep(index, r, "launchTemplate", LAUNCH_TEMPLATE)
    lt = lts[0] if lts else None
    mip = r.inputs.get("mixedInstancesPolicy") or {}
    overrides = ((mip.get("launchTemplate") or {}).get("overrides")) or []
    types = [o.get("instanceType") for o in overrides if isinstance(o, dict) and _known(o.get("instanceType"))]
    if not types and lt is not None and _known(lt.inputs.get("instanceType")):
        types = [lt.inputs["instanceType"]]
    boot = parse_user_data(lt.inputs.get("userData")) if lt is not None else Bootstrap({}, [], False, True)
    zones = _zones(ctx, r, "vpcZoneIdentifiers") or (
        frozenset(z for z in r.inputs.get("availabilityZones") or [] if _known(z)) or None
    )
    tags: dict[str, str] = {}
    for t in r.inputs.get("tags") or []:
        if isinstance(t, dict):
            k = t.get("key")
            tags[str(k) if _known(k) else f"<unknown:{len(tags)}>"] = str(t.get("value"))
    variants = []
    for t in types or [None]:
        labels = NodeLabels()
        for k, v in boot.labels.items():
            labels.add(k, v)
        labels.add("topology.kubernetes.io/zone", zones)
        labels.add("topology.kubernetes.io/region", ctx.plan.config.get("aws:region") or None)
        labels.open = not boot.known
        variants.append(base_variant(str(t) if t else None, labels, _lt_efa(lt)))
    image = str(lt.inputs.get("imageId") or "") if lt is not None else ""
    pool = Pool(
        r.urn,
        str(r.inputs.get("name")) if _known(r.inputs.get("name")) else r.name,
        "self-managed ASG",
        variants,
        list(boot.taints),
        taints_open=not boot.known,
        min_size=_num(r.inputs.get("minSize")),
        max_size=_num(r.inputs.get("maxSize")),
        tags=tags,
        ami="bottlerocket" if lt is not None and "[settings" in _decoded(lt.inputs.get("userData")) else image,
        registered_labels=dict(boot.labels),
    )
    if not boot.known:
        pool.notes.append(
            "launch template user data is only known after deploy: node labels and taints come from it, so "
            "selectors on them cannot be checked offline"
        )
    return pool


def _decoded(value: Any) -> str:
    if not _known(value):
        return ""
    try:
        return base64.b64decode(str(value), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return str(value)


# Karpenter well-known requirement keys -> how an instance type answers them (karpenter-provider-aws labels).
def karpenter_instance_labels(spec: InstanceSpec) -> dict[str, str]:
    family = spec.family
    m = re.match(r"^([a-z]+?)(\d+)", family)
    category, generation = (m.group(1), m.group(2)) if m else (family, "")
    out = {
        "karpenter.k8s.aws/instance-family": family,
        "karpenter.k8s.aws/instance-category": category,
        "karpenter.k8s.aws/instance-generation": generation,
        "karpenter.k8s.aws/instance-size": spec.instance_type.split(".", 1)[-1],
        "karpenter.k8s.aws/instance-cpu": str(spec.vcpu),
        "karpenter.k8s.aws/instance-memory": str(int(spec.memory_gib * 1024)),
        "karpenter.k8s.aws/instance-hypervisor": "nitro",
    }
    if spec.is_gpu:
        out["karpenter.k8s.aws/instance-gpu-count"] = str(spec.accelerator_count)
        out["karpenter.k8s.aws/instance-gpu-manufacturer"] = spec.manufacturer
        out["karpenter.k8s.aws/instance-gpu-name"] = spec.accelerator.lower().split("-")[0]
        out["karpenter.k8s.aws/instance-gpu-memory"] = str(int(spec.accelerator_memory_gib * 1024))
    elif spec.manufacturer == "aws":
        out["karpenter.k8s.aws/instance-accelerator-count"] = str(spec.accelerator_count)
        out["karpenter.k8s.aws/instance-accelerator-manufacturer"] = "aws"
        out["karpenter.k8s.aws/instance-accelerator-name"] = spec.accelerator.lower()
    if spec.has_instance_store and spec.local_nvme_gb:
        out["karpenter.k8s.aws/instance-local-nvme"] = str(spec.local_nvme_gb)
    return out


def _karpenter(ctx: ConformanceContext, obj: KObject, classes: dict[str, KObject]) -> Pool:
    spec = obj.spec
    template = spec.get("template") or {}
    tspec = template.get("spec") or {}
    static = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
    reqs = [q for q in tspec.get("requirements") or [] if isinstance(q, dict)]
    ref = tspec.get("nodeClassRef") or {}
    node_class = classes.get(str(ref.get("name")))
    capacity = {"spot", "on-demand"}
    zones: frozenset[str] | None = None
    for q in reqs:
        if q.get("key") == "karpenter.sh/capacity-type" and q.get("operator") == "In":
            capacity = {str(v) for v in q.get("values") or []}
        if q.get("key") == "topology.kubernetes.io/zone" and q.get("operator") == "In":
            zones = frozenset(str(v) for v in q.get("values") or [])
    variants: list[NodeVariant] = []
    constrained = False
    for inst in get_catalog():
        labels = NodeLabels()
        for k, v in karpenter_instance_labels(inst).items():
            labels.add(k, v)
        labels.add("node.kubernetes.io/instance-type", inst.instance_type)
        labels.add("kubernetes.io/arch", "arm64" if _GRAVITON.match(inst.family) else "amd64")
        labels.add("kubernetes.io/os", "linux")
        offered = {c for c in capacity if (c != "spot" or inst.spot) and (c != "on-demand" or inst.on_demand)}
        labels.add("karpenter.sh/capacity-type", offered or capacity)
        ok = True
        for q in reqs:
            key = str(q.get("key"))
            if key in ("karpenter.sh/capacity-type", "topology.kubernetes.io/zone"):
                continue
            if key in labels.values:
                constrained = True
                if match_requirement(labels, q) is False:
                    ok = False
                    break
        if ok:
            variants.append(
                base_variant(inst.instance_type, _karpenter_labels(labels, obj, static, reqs, zones, node_class), True)
            )
    if not constrained:
        # Nothing restricts the NodePool to accelerated types: it also launches ordinary instances the catalog
        # does not describe.
        variants.append(
            base_variant(None, _karpenter_labels(NodeLabels(), obj, static, reqs, zones, node_class), False)
        )
    for variant in variants:
        for k in ("karpenter.sh/nodepool", "karpenter.sh/capacity-type"):
            variant.providers[k] = "Karpenter"
    taints = [
        Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
        for t in tspec.get("taints") or []
        if isinstance(t, dict)
    ]
    max_size = None
    limits = spec.get("limits") or {}
    from gpucloud.conformance.kube import quantity

    for res, per in ((GPU, "nvidia_gpus"), (NEURON, "neuron_devices"), ("cpu", "")):
        lim = quantity(limits.get(res))
        if lim is None:
            continue
        sizes = [(getattr(v, per) if per else (v.spec.vcpu if v.spec else 0)) for v in variants if v.spec is not None]
        sizes = [s for s in sizes if s]
        if sizes:
            n = int(lim // min(sizes))
            max_size = n if max_size is None else min(max_size, n)
    ami = ""
    if node_class is not None:
        terms = node_class.spec.get("amiSelectorTerms") or []
        ami = " ".join(str(t.get("alias", "")) for t in terms if isinstance(t, dict)) or str(
            node_class.spec.get("amiFamily") or ""
        )
    pool = Pool(
        obj.urn,
        obj.name,
        "Karpenter NodePool",
        variants,
        taints,
        min_size=0,
        max_size=max_size,
        ami=ami,
        obj_ref=obj.ref,
        node_class=node_class,
    )
    return pool


def _karpenter_labels(
    labels: NodeLabels,
    obj: KObject,
    static: dict[str, str],
    reqs: list[dict[str, Any]],
    zones: frozenset[str] | None,
    node_class: KObject | None,
) -> NodeLabels:
    for k, v in static.items():
        labels.add(k, v)
    labels.add("karpenter.sh/nodepool", obj.name)
    labels.add("karpenter.k8s.aws/ec2nodeclass", node_class.name if node_class is not None else None)
    labels.add("topology.kubernetes.io/zone", zones)
    # A requirement on any other key with In values becomes a node label (Karpenter picks one of the values).
    for q in reqs:
        key = str(q.get("key"))
        if key not in labels.values and q.get("operator") == "In":
            labels.add(key, [str(v) for v in q.get("values") or []])
    return labels


def build_pools(ctx: ConformanceContext) -> list[Pool]:
    """Every pool in the plan (cached on the context: the checks share one model)."""
    cached = ctx.facts.get("_scheduling_pools")
    if cached is not None and cached[0] == len(ctx.derived):
        return list(cached[1])
    index = ctx.plan.by_urn()
    pools: list[Pool] = []
    # A pool whose inputs have a shape the API would reject is left out (the schema check names it).
    for r in ctx.plan.resources:
        try:
            if r.type == NODE_GROUP:
                pools.append(_managed(ctx, r, index))
            elif r.type == ASG:
                pools.append(_self_managed(ctx, r, index))
        except (AttributeError, TypeError, ValueError):
            continue
    objs = objects(ctx)
    classes = {o.name: o for o in objs if o.kind == "EC2NodeClass" and o.api_version.startswith("karpenter.k8s.aws/")}
    for o in objs:
        if o.kind == "NodePool" and o.api_version.startswith("karpenter.sh/"):
            try:
                pools.append(_karpenter(ctx, o, classes))
            except (AttributeError, TypeError, ValueError):
                continue
    startup_taints(pools, objs)
    ctx.facts["_scheduling_pools"] = (len(ctx.derived), pools)
    return list(pools)


# A DaemonSet annotated with this taint key removes that taint from each node once its pod has run there (the
# node health gate, components/addons/node_health.py). Such a taint only delays scheduling, like Karpenter's
# startupTaints and Cluster Autoscaler's startup-taint prefix.
REMOVES_TAINT_ANNOTATION = "gpucloud.io/removes-taint"


def startup_taints(pools: list[Pool], objs: list[KObject]) -> None:
    """Move each taint a DaemonSet removes out of the pool's steady-state taints, where that DaemonSet lands.

    A remover that cannot run on the pool (selector, or a taint it does not tolerate) never removes the taint:
    it stays, and every workload that does not tolerate it is reported as never fitting, which is what happens.
    """
    removers: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        if o.kind != "DaemonSet":
            continue
        key = (o.metadata.get("annotations") or {}).get(REMOVES_TAINT_ANNOTATION)
        if isinstance(key, str) and key:
            removers.setdefault(key, []).extend(ps.pod_spec for ps in pod_sets(o))
    if not removers:
        return
    for pool in pools:
        for taint in list(pool.taints):
            for pod_spec in removers.get(taint.key, []):
                if untolerated(pod_spec.get("tolerations") or [], pool.taints):
                    continue
                if any(selector_fits(v.labels, pod_spec)[0] is not False for v in pool.variants):
                    # A new list: the parsed taints may be shared with other plans' models (cached parses).
                    pool.taints = [t for t in pool.taints if t != taint]
                    pool.startup_taints = [*pool.startup_taints, taint]
                    pool.notes.append(f"startup taint {taint} removed by a DaemonSet once it has run on the node")
                    break
