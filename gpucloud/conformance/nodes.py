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

from dataclasses import dataclass, field
from typing import Any

from gpucloud import fleet
from gpucloud.catalog import InstanceSpec, get_catalog
from gpucloud.catalog.allocatable import reserve
from gpucloud.conformance import ConformanceContext
from gpucloud.conformance.inventory import KObject, objects, pod_sets
from gpucloud.conformance.kube import NodeLabels, Taint, selector_fits, untolerated
from gpucloud.fleet import labels as L
from gpucloud.fleet import types as T
from gpucloud.fleet.bootstrap import Bootstrap, parse_user_data
from gpucloud.fleet.joins import Record
from gpucloud.fleet.karpenter import karpenter
from gpucloud.plan.model import is_unknown

# Type tokens, labels and device resources are the fleet layer's (gpucloud.fleet), each defined once.
NODE_GROUP = T.NODE_GROUP
ASG = T.AUTOSCALING_GROUP
LAUNCH_TEMPLATE = T.LAUNCH_TEMPLATE
EKS_CLUSTER = T.EKS_CLUSTER

GPU = L.NVIDIA_GPU
EFA = L.EFA
NEURON = L.NEURON
NEURONCORE = L.NEURONCORE
NEURONDEVICE = L.NEURONDEVICE
__all__ = ["Bootstrap", "parse_user_data"]

# eks.amazonaws.com/capacityType values per market.
_EKS_CAPACITY = {fleet.ON_DEMAND: "ON_DEMAND", fleet.SPOT: "SPOT", fleet.CAPACITY_BLOCK: "CAPACITY_BLOCK"}


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
        arch = L.arch(instance_type)
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


# -- pools --------------------------------------------------------------------------------------------------


def _managed(ctx: ConformanceContext, p: fleet.Pool) -> Pool:
    """An EKS managed node group: its labels, the EKS ones, the zones of its subnets."""
    region = p.region or ctx.plan.config.get("aws:region") or None
    variants: list[NodeVariant] = []
    capacity = _EKS_CAPACITY.get(p.markets[0], "ON_DEMAND") if p.markets else "ON_DEMAND"
    static = {k: v for k, v in p.labels.items() if k != L.EKS_NODEGROUP}
    types: list[str | None] = [*p.instance_types] or [None]
    for t in types:
        labels = NodeLabels()
        for k, val in static.items():
            labels.add(k, val)
        labels.add(L.EKS_NODEGROUP, p.labels.get(L.EKS_NODEGROUP))
        labels.add(L.EKS_CAPACITY_TYPE, capacity)
        labels.add(L.EKS_NODEGROUP_IMAGE, None)
        labels.add(L.ZONE, p.zones)
        labels.add(L.REGION, region)
        labels.open = not p.user_data_known
        v = base_variant(t, labels, bool(p.efa_interfaces))
        if "WINDOWS" in p.ami_family:
            v.labels.values[L.OS] = frozenset({"windows"})
        for k in (L.EKS_NODEGROUP, L.EKS_CAPACITY_TYPE):
            v.providers[k] = "EKS managed node group"
        variants.append(v)
    pool = Pool(
        p.urn,
        p.labels.get(L.EKS_NODEGROUP) or p.name,
        "managed node group",
        variants,
        list(p.taints),
        taints_open=not p.user_data_known,
        min_size=p.counts.min,
        max_size=p.counts.max,
        tags=dict(p.tags),
        ami=p.ami_family,
    )
    if not p.instance_types:
        pool.notes.append("instance types unknown at plan time")
    return pool


def _self_managed(ctx: ConformanceContext, p: fleet.Pool, name: Any) -> Pool:
    """A self-managed Auto Scaling group: labels and taints from its launch template's user data."""
    region = p.region or ctx.plan.config.get("aws:region") or None
    variants = []
    types: list[str | None] = [*p.instance_types] or [None]
    for t in types:
        labels = NodeLabels()
        for k, v in p.labels.items():
            labels.add(k, v)
        labels.add(L.ZONE, p.zones)
        labels.add(L.REGION, region)
        labels.open = not p.user_data_known
        variants.append(base_variant(str(t) if t else None, labels, bool(p.efa_interfaces)))
    ami = ""
    if p.launch_template is not None:
        ami = "bottlerocket" if "[settings" in (p.user_data or "") else p.ami_release
    pool = Pool(
        p.urn,
        str(name) if name is not None and not is_unknown(name) else p.name,
        "self-managed ASG",
        variants,
        list(p.taints),
        taints_open=not p.user_data_known,
        min_size=p.counts.min,
        max_size=p.counts.max,
        tags=dict(p.tags),
        ami=ami,
        registered_labels=dict(p.labels),
    )
    if not p.user_data_known:
        pool.notes.append(
            "launch template user data is only known after deploy: node labels and taints come from it, so "
            "selectors on them cannot be checked offline"
        )
    return pool


def karpenter_instance_labels(spec: InstanceSpec) -> dict[str, str]:
    """The well-known labels Karpenter gives a node of this type (gpucloud.fleet.labels)."""
    return L.instance_labels(spec)


def _karpenter(
    ctx: ConformanceContext, index: fleet.Fleet, obj: KObject, classes: dict[str, KObject], records: dict[str, Record]
) -> Pool:
    p = index.finish(karpenter(index, _kobject_record(obj), records))
    node_class = classes.get(p.node_class or "")
    has_capacity = any(str(q.get("key")) == L.CAPACITY_TYPE and q.get("operator") == "In" for q in p.requirements)
    # Without a capacity-type requirement the model lets either market label the node.
    capacity = set(p.markets) if has_capacity else {fleet.SPOT, fleet.ON_DEMAND}
    static = {k: v for k, v in p.labels.items() if k != L.NODEPOOL}
    admitted = set(p.instance_types)
    variants: list[NodeVariant] = []
    for inst in get_catalog():
        if inst.instance_type not in admitted:
            continue
        labels = NodeLabels()
        for k, v in L.instance_labels(inst).items():
            labels.add(k, v)
        labels.add(L.OS, "linux")
        offered = {c for c in capacity if (c != fleet.SPOT or inst.spot) and (c != fleet.ON_DEMAND or inst.on_demand)}
        labels.add(L.CAPACITY_TYPE, offered or capacity)
        variants.append(base_variant(inst.instance_type, _karpenter_labels(labels, obj, static, p, node_class), True))
    if p.types_open:
        # Nothing restricts the NodePool to accelerated types: it also launches ordinary instances the catalog
        # does not describe.
        variants.append(base_variant(None, _karpenter_labels(NodeLabels(), obj, static, p, node_class), False))
    for variant in variants:
        for k in (L.NODEPOOL, L.CAPACITY_TYPE):
            variant.providers[k] = "Karpenter"
    max_size = None
    from gpucloud.conformance.kube import quantity

    for res, per in ((GPU, "nvidia_gpus"), (NEURON, "neuron_devices"), ("cpu", "")):
        lim = quantity(p.limits.get(res))
        if lim is None:
            continue
        sizes = [(getattr(v, per) if per else (v.spec.vcpu if v.spec else 0)) for v in variants if v.spec is not None]
        sizes = [s for s in sizes if s]
        if sizes:
            n = int(lim // min(sizes))
            max_size = n if max_size is None else min(max_size, n)
    return Pool(
        obj.urn,
        obj.name,
        "Karpenter NodePool",
        variants,
        list(p.taints),
        min_size=0,
        max_size=max_size,
        ami=_node_class_ami(node_class),
        obj_ref=obj.ref,
        node_class=node_class,
    )


def _node_class_ami(node_class: KObject | None) -> str:
    if node_class is None:
        return ""
    terms = node_class.spec.get("amiSelectorTerms") or []
    aliases = " ".join(str(t.get("alias", "")) for t in terms if isinstance(t, dict))
    return aliases or str(node_class.spec.get("amiFamily") or "")


def _kobject_record(obj: KObject) -> Record:
    return Record(urn=obj.urn, type=f"object:{obj.kind}", name=obj.name, inputs=obj.manifest)


def _karpenter_labels(
    labels: NodeLabels, obj: KObject, static: dict[str, str], p: fleet.Pool, node_class: KObject | None
) -> NodeLabels:
    for k, v in static.items():
        labels.add(k, v)
    labels.add(L.NODEPOOL, obj.name)
    labels.add(L.EC2NODECLASS, node_class.name if node_class is not None else None)
    labels.add(L.ZONE, p.zones)
    # A requirement on any other key with In values becomes a node label (Karpenter picks one of the values).
    for q in p.requirements:
        key = L.normalize(str(q.get("key")))
        if key not in labels.values and q.get("operator") == "In":
            labels.add(key, [str(v) for v in q.get("values") or []])
    return labels


def build_pools(ctx: ConformanceContext) -> list[Pool]:
    """Every pool in the plan, read from the fleet layer (cached on the context: the checks share one model)."""
    cached = ctx.facts.get("_scheduling_pools")
    if cached is not None and cached[0] == len(ctx.derived):
        return list(cached[1])
    index = fleet.Fleet(ctx.plan.resources)
    by_urn = ctx.plan.by_urn()
    pools: list[Pool] = []
    # A pool whose inputs have a shape the API would reject is left out (the schema check names it).
    for p in index.pools():
        try:
            if p.type == NODE_GROUP:
                pools.append(_managed(ctx, p))
            elif p.type == ASG:
                pools.append(_self_managed(ctx, p, by_urn[p.urn].inputs.get("name")))
        except (AttributeError, TypeError, ValueError):
            continue
    objs = objects(ctx)
    classes = {o.name: o for o in objs if o.kind == "EC2NodeClass" and o.api_version.startswith("karpenter.k8s.aws/")}
    class_records = {name: _kobject_record(o) for name, o in classes.items()}
    for o in objs:
        if o.kind == "NodePool" and o.api_version.startswith("karpenter.sh/"):
            try:
                pools.append(_karpenter(ctx, index, o, classes, class_records))
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
