"""Where capacity is chosen, and the GPU facts about it (from gpucloud.catalog): the pack's one notion of
capacity.

Every path that can start an instance is read: EKS node group ``instanceTypes``, launch template and launch
configuration ``instanceType``, autoscaling group mixed-instances overrides (named types and attribute-based
``instanceRequirements``), EC2 instances, spot requests, EC2 Fleet and Spot Fleet configs, capacity
reservations, and Karpenter NodePools (``karpenter.sh/v1`` and ``v1beta1``, whatever created them). Requirement
sets (attribute-based instance requirements, NodePool requirements) are resolved against the catalog to the
GPU types they admit, so a policy sees one list of :class:`Choice` per resource whatever the path. Checking
``aws:ec2/instance`` alone is the known hole in published rules.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import catalog
from gpucloud.fleet import labels as L
from gpucloud.fleet import selection
from gpucloud.fleet import types as T
from gpucloud.spec.kinds import WorkloadKind

from .base import falsy, get, integer, items, keys, maps, strings, tags_of, text

# Type tokens and well-known labels are the fleet layer's (gpucloud.fleet), each defined once there.
NODE_GROUP = T.NODE_GROUP
LAUNCH_TEMPLATE = T.LAUNCH_TEMPLATE
LAUNCH_CONFIG = T.LAUNCH_CONFIGURATION
ASG = T.AUTOSCALING_GROUP
INSTANCE = T.INSTANCE
SPOT_REQUEST = T.SPOT_INSTANCE_REQUEST
FLEET = T.EC2_FLEET
SPOT_FLEET = T.SPOT_FLEET_REQUEST
CAPACITY_RESERVATION = T.CAPACITY_RESERVATION
NODE_POOL = T.KARPENTER_NODEPOOL
NODE_POOL_V1BETA1 = T.KARPENTER_NODEPOOL_V1BETA1
NODE_POOLS = frozenset(T.KARPENTER_NODEPOOLS)
NODE_CLASS = T.EC2_NODE_CLASS

CAPACITY_TYPES = T.CAPACITY_TYPES
# Resources that start and scale nodes themselves (a template or configuration only describes them).
POOL_TYPES = T.POOL_TYPES

KEY_INSTANCE_TYPE = L.INSTANCE_TYPE
KEY_FAMILY = L.INSTANCE_FAMILY
KEY_GPU_NAME = L.INSTANCE_GPU_NAME
KEY_GPU_COUNT = L.INSTANCE_GPU_COUNT
KEY_CAPACITY_TYPE = L.CAPACITY_TYPE
GPU_RESOURCE = L.NVIDIA_GPU
# Accelerated families: P, G (incl. gr6), Trainium, Inferentia, DL (Gaudi), for names the catalog lacks.
_ACCELERATED_FAMILY = re.compile(r"^(?:p|g|gr|trn|inf|dl)\d")


@dataclass(frozen=True)
class TypeRef:
    """One instance type named on a capacity path (``path`` is the camelCase property path)."""

    path: str
    instance_type: str


@functools.cache
def spec(instance_type: str) -> catalog.InstanceSpec | None:
    return catalog.get_catalog().find(instance_type)


def family(instance_type: str) -> str:
    return instance_type.partition(".")[0]


@functools.cache
def is_accelerated(instance_type: str) -> bool:
    try:
        return catalog.is_gpu_instance_type(instance_type)
    except Exception:  # a malformed name is simply not a known accelerated type
        return False


@functools.cache
def family_is_accelerated(name: str) -> bool:
    """A family (``p5``, ``g6e``, ``trn1``) of GPU / accelerator instances, in the catalog or shaped like one."""
    if any(s.family == name for s in catalog.get_catalog()):
        return True
    return bool(_ACCELERATED_FAMILY.match(name))


def is_valid(instance_type: str) -> bool:
    return catalog.is_valid_ec2_instance_type(instance_type)


def gpus(instance_type: str) -> int:
    s = spec(instance_type)
    return s.accelerator_count if s is not None else 0


def _lt_overrides(configs: Any, base: str) -> list[tuple[str, Any]]:
    """(path, override) for every override of Fleet / Spot Fleet ``launchTemplateConfigs``."""
    out = []
    for i, cfg in enumerate(items(configs)):
        for j, o in enumerate(items(get(cfg, "overrides"))):
            out.append((f"{base}[{i}].overrides[{j}]", o))
    return out


def _overrides(resource_type: str, props: Any) -> list[tuple[str, Any]]:
    """Where a resource names a type or a requirement set, as (path, mapping holding instanceType/...)."""
    if resource_type == ASG:
        base = "mixedInstancesPolicy.launchTemplate.overrides"
        return [(f"{base}[{i}]", o) for i, o in enumerate(items(get(props, *base.split("."))))]
    if resource_type == FLEET:
        return _lt_overrides(get(props, "launchTemplateConfigs"), "launchTemplateConfigs")
    if resource_type == SPOT_FLEET:
        specs = [(f"launchSpecifications[{i}]", s) for i, s in enumerate(items(get(props, "launchSpecifications")))]
        return specs + _lt_overrides(get(props, "launchTemplateConfigs"), "launchTemplateConfigs")
    return []


def type_refs(resource_type: str, props: Any) -> list[TypeRef]:
    """Instance types named on this resource's capacity paths (Karpenter: ``In`` instance-type requirements)."""
    if resource_type == NODE_GROUP:
        return [TypeRef(f"instanceTypes[{i}]", t) for i, t in enumerate(strings(get(props, "instanceTypes")))]
    if resource_type in (LAUNCH_TEMPLATE, LAUNCH_CONFIG, INSTANCE, SPOT_REQUEST, CAPACITY_RESERVATION):
        t = text(get(props, "instanceType"))
        return [TypeRef("instanceType", t)] if t else []
    if resource_type in NODE_POOLS:
        return [
            TypeRef(f"spec.template.spec.requirements[{i}]", t)
            for i, r in requirements(props)
            if text(get(r, "key")) == KEY_INSTANCE_TYPE and text(get(r, "operator")) == "In"
            for t in strings(get(r, "values"))
        ]
    refs = []
    for path, o in _overrides(resource_type, props):
        t = text(get(o, "instanceType"))
        if t:
            refs.append(TypeRef(f"{path}.instanceType", t))
    return refs


# ---------------------------------------------------------------------------------------------------------
# Requirement sets resolved against the catalog.


@dataclass(frozen=True)
class Choice:
    """Catalog types a requirement set admits: ``path`` is where it is written, ``via`` what it says."""

    path: str
    via: str
    instance_types: tuple[str, ...]

    @property
    def families(self) -> list[str]:
        return sorted({family(t) for t in self.instance_types})


def accelerator_names(s: catalog.InstanceSpec) -> set[str]:
    """The name EC2 and Karpenter give the accelerator (the catalog's ``ec2_accelerator_name``: ``a100`` for
    both A100 sizes, ``inferentia2``, ``trainium2``), and the catalog's own name in lower case."""
    return {L.accelerator_label(s), s.accelerator.lower()}


# Keys that narrow which instance types a NodePool may launch; zone, arch, capacity type and the like do not.
_TYPE_KEY = re.compile(r"^(node\.kubernetes\.io/instance-type|karpenter\.k8s\.aws/instance-.*)$")


def _nodepool_choice(props: Any) -> Choice | None:
    reqs = [
        (i, text(get(r, "key")), text(get(r, "operator")), strings(get(r, "values"))) for i, r in requirements(props)
    ]
    narrowing = [r for r in reqs if _TYPE_KEY.match(L.normalize(r[1]))]
    if not narrowing:
        return None
    admitted = tuple(
        s.instance_type
        for s in catalog.get_catalog()
        if selection.type_admits(s.instance_type, s, [(key, op, values) for _, key, op, values in narrowing])
    )
    via = " and ".join(f"{key} {op} {values}" if values else f"{key} {op}" for _, key, op, values in narrowing)
    return Choice("spec.template.spec.requirements", f"requirements {via}", admitted)


def choices(resource_type: str, props: Any) -> list[Choice]:
    """Every capacity choice of a resource: named types (one Choice each, ``via`` "") and requirement sets
    (attribute-based instance requirements, NodePool requirements) resolved to the catalog types they admit."""
    out: list[Choice] = []
    if resource_type in NODE_POOLS:
        c = _nodepool_choice(props)
        return [c] if c is not None else []
    for ref in type_refs(resource_type, props):
        out.append(Choice(ref.path, "", (ref.instance_type,)))
    for path, o in _overrides(resource_type, props):
        req = get(o, "instanceRequirements")
        if isinstance(req, Mapping):
            admitted = selection.abs_types(catalog.get_catalog(), req)
            out.append(Choice(f"{path}.instanceRequirements", "instanceRequirements", admitted))
    return out


def choice_types(resource_type: str, props: Any) -> list[str]:
    return [t for c in choices(resource_type, props) for t in c.instance_types]


def requirements(props: Any) -> list[tuple[int, Mapping[str, Any]]]:
    reqs = get(props, "spec", "template", "spec", "requirements")
    return [(i, r) for i, r in enumerate(items(reqs)) if isinstance(r, Mapping)]


def requirement_values(props: Any, key: str, operator: str = "In") -> list[str] | None:
    """Values of the NodePool requirement on ``key`` with ``operator``; None when there is none."""
    found = None
    for _, r in requirements(props):
        if text(get(r, "key")) == key and text(get(r, "operator")) == operator:
            found = (found or []) + strings(get(r, "values"))
    return found


@functools.cache
def families_for_gpu_name(name: str) -> frozenset[str]:
    """Catalog families whose accelerator matches a Karpenter GPU name label (``h100``, ``a10g``, ``l40s``)."""
    wanted = name.strip().lower()
    return frozenset(s.family for s in catalog.get_catalog() if wanted in accelerator_names(s))


def nodepool_families(props: Any) -> tuple[set[str] | None, str]:
    """Families a NodePool may launch and the requirements that bound them; None when nothing narrows them."""
    c = _nodepool_choice(props)
    if c is None or len(c.instance_types) == len(catalog.get_catalog()):
        return None, ""
    return set(c.families), c.via


def nodepool_is_gpu(props: Any) -> bool:
    """A NodePool that can carry GPU work: GPU limits, a GPU taint, or requirements admitting GPU types."""
    if GPU_RESOURCE in keys(get(props, "spec", "limits")):
        return True
    for t in maps(get(props, "spec", "template", "spec", "taints")):
        if text(get(t, "key")) == GPU_RESOURCE:
            return True
    for _, r in requirements(props):
        if text(get(r, "key")) in (KEY_GPU_NAME, KEY_GPU_COUNT):
            return True
    types = requirement_values(props, KEY_INSTANCE_TYPE) or []
    fams = requirement_values(props, KEY_FAMILY) or []
    if any(is_accelerated(t) for t in types) or any(family_is_accelerated(f) for f in fams):
        return True
    fams_admitted, _ = nodepool_families(props)
    return bool(fams_admitted)


# ---------------------------------------------------------------------------------------------------------
# Size and purchase option.


def max_size(resource_type: str, props: Any) -> int | None:
    """Most nodes the resource can run (Fleet / Spot Fleet: target capacity in instances)."""
    if resource_type == NODE_GROUP:
        return integer(get(props, "scalingConfig", "maxSize"))
    if resource_type == ASG:
        return integer(get(props, "maxSize"))
    if resource_type == FLEET:
        return integer(get(props, "targetCapacitySpecification", "totalTargetCapacity"))
    if resource_type == SPOT_FLEET:
        return integer(get(props, "targetCapacity"))
    if resource_type == CAPACITY_RESERVATION:
        return integer(get(props, "instanceCount"))
    if resource_type in (INSTANCE, SPOT_REQUEST):
        return 1
    return None


def min_size(resource_type: str, props: Any) -> int | None:
    if resource_type == NODE_GROUP:
        return integer(get(props, "scalingConfig", "minSize"))
    if resource_type == ASG:
        return integer(get(props, "minSize"))
    return None


ON_DEMAND, SPOT, CAPACITY_BLOCK = "on_demand", "spot", "capacity_block"
_LT_MARKET = {"spot": SPOT, "capacity-block": CAPACITY_BLOCK}
_FLEET_MARKET = {"on-demand": ON_DEMAND, "spot": SPOT, "capacity-block": CAPACITY_BLOCK}


def markets(resource_type: str, props: Any) -> list[str]:
    """Purchase options the resource buys (``on_demand``, ``spot``, ``capacity_block``); [] when another
    resource decides (a launch template without market options takes its node group's or ASG's)."""
    if resource_type == NODE_GROUP:
        ct = text(get(props, "capacityType"), "ON_DEMAND")
        return [{"SPOT": SPOT, "CAPACITY_BLOCK": CAPACITY_BLOCK}.get(ct, ON_DEMAND)]
    if resource_type in (LAUNCH_TEMPLATE, INSTANCE):
        market = text(get(props, "instanceMarketOptions", "marketType"))
        if not market:
            return [] if resource_type == LAUNCH_TEMPLATE else [ON_DEMAND]
        return [_LT_MARKET.get(market, ON_DEMAND)]
    if resource_type == SPOT_REQUEST:
        return [SPOT]
    if resource_type == LAUNCH_CONFIG:
        return [SPOT] if text(get(props, "spotPrice")) else [ON_DEMAND]
    if resource_type == ASG:
        dist = get(props, "mixedInstancesPolicy", "instancesDistribution")
        if dist is None:
            return []
        base = integer(get(dist, "onDemandBaseCapacity"), 0) or 0
        pct = integer(get(dist, "onDemandPercentageAboveBaseCapacity"), 100)
        out = []
        if base > 0 or pct is None or pct > 0:
            out.append(ON_DEMAND)
        if pct is not None and pct < 100:
            out.append(SPOT)
        return out
    if resource_type == FLEET:
        tcs = get(props, "targetCapacitySpecification")
        found = {_FLEET_MARKET.get(text(get(tcs, "defaultTargetCapacityType")), ON_DEMAND)}
        if (integer(get(tcs, "spotTargetCapacity"), 0) or 0) > 0:
            found.add(SPOT)
        if (integer(get(tcs, "onDemandTargetCapacity"), 0) or 0) > 0:
            found.add(ON_DEMAND)
        return sorted(found)
    if resource_type == SPOT_FLEET:
        od = (integer(get(props, "onDemandTargetCapacity"), 0) or 0) > 0
        return [ON_DEMAND, SPOT] if od else [SPOT]
    if resource_type in NODE_POOLS:
        # Karpenter launches on-demand when a NodePool leaves karpenter.sh/capacity-type out.
        values = requirement_values(props, KEY_CAPACITY_TYPE)
        if values is None:
            return [ON_DEMAND]
        return sorted({{"spot": SPOT, "reserved": CAPACITY_BLOCK}.get(v, ON_DEMAND) for v in values})
    return []


def spot_nodes(resource_type: str, props: Any, nodes: int) -> float:
    """How many of ``nodes`` (at maximum size) are bought on spot."""
    if resource_type == ASG:
        dist = get(props, "mixedInstancesPolicy", "instancesDistribution")
        if dist is None:
            return 0
        base = integer(get(dist, "onDemandBaseCapacity"), 0) or 0
        pct = integer(get(dist, "onDemandPercentageAboveBaseCapacity"), 100)
        pct = 100 if pct is None else pct
        return max(0, nodes - base) * (100 - pct) / 100
    if resource_type == FLEET:
        tcs = get(props, "targetCapacitySpecification")
        if text(get(tcs, "defaultTargetCapacityType")) == "spot":
            return max(0, nodes - (integer(get(tcs, "onDemandTargetCapacity"), 0) or 0))
        return min(nodes, integer(get(tcs, "spotTargetCapacity"), 0) or 0)
    if resource_type == SPOT_FLEET:
        return max(0, nodes - (integer(get(props, "onDemandTargetCapacity"), 0) or 0))
    return nodes if markets(resource_type, props) == [SPOT] else 0


# ---------------------------------------------------------------------------------------------------------
# What the pool is for: the documented gpucloud keys.

WORKLOAD_KEY = L.WORKLOAD
INTERRUPTIBLE_KEY = L.INTERRUPTIBLE
# The workload kinds gpucloud's own spec knows (gpucloud.spec.kinds.WorkloadKind); components label pools with
# them under gpucloud.io/workload.
WORKLOAD_KINDS: tuple[str, ...] = typing.get_args(WorkloadKind)


def _marks(resource_type: str, props: Any) -> list[Mapping[str, Any]]:
    """Label and tag maps that mark a pool: NodePool template labels, node group labels, tags, ASG tags."""
    sources: list[Mapping[str, Any]] = []
    if resource_type in NODE_POOLS:
        for path in (("spec", "template", "metadata", "labels"), ("metadata", "labels")):
            labels = get(props, *path)
            if isinstance(labels, Mapping):
                sources.append(labels)
        return sources
    labels = get(props, "labels")
    if isinstance(labels, Mapping):
        sources.append(labels)
    sources.append(tags_of(props))
    if resource_type == ASG:
        sources.append({text(get(t, "key")): get(t, "value") for t in maps(get(props, "tags"))})
    if resource_type == LAUNCH_TEMPLATE:
        for spec_ in maps(get(props, "tagSpecifications")):
            sources.append(tags_of(spec_))
    return sources


def mark(resource_type: str, props: Any, label_keys: list[str]) -> str:
    """The first of ``label_keys`` found on the pool's labels or tags, lower-cased; "" when unmarked."""
    for source in _marks(resource_type, props):
        for key in label_keys:
            if key in keys(source):
                value = source[key]
                if isinstance(value, str):
                    return value.strip().lower()
    return ""


def workload(resource_type: str, props: Any, label_keys: list[str]) -> str:
    """The pool's workload kind from its node labels or tags (training, inference, ...); "" when unmarked."""
    return mark(resource_type, props, label_keys)


def is_training(kind: str, training: set[str]) -> bool:
    """Training rules apply to the configured training kinds and, failing closed, to any value that is not a
    documented kind: ``pretraining`` or ``fine-tuning`` must not let a training pool skip them."""
    return bool(kind) and (kind in training or kind not in WORKLOAD_KINDS)


def non_interruptible(resource_type: str, props: Any) -> bool:
    """Marked ``gpucloud.io/interruptible: "false"`` (tag or node label)."""
    return falsy(mark(resource_type, props, [INTERRUPTIBLE_KEY]))
