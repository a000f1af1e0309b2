"""Where capacity is chosen, and the GPU facts about it (from gpucloud.catalog).

Every path that can start an instance is read: EKS node group ``instanceTypes``, launch template
``instanceType``, autoscaling group mixed-instances overrides, EC2 instances and spot requests, and Karpenter
NodePool requirements. Checking ``aws:ec2/instance`` alone is the known hole in published rules.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import catalog

from .base import get, integer, items, keys, maps, strings, tags_of, text

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
INSTANCE = "aws:ec2/instance:Instance"
SPOT_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"

CAPACITY_TYPES = frozenset({NODE_GROUP, LAUNCH_TEMPLATE, ASG, INSTANCE, SPOT_REQUEST, NODE_POOL})
POOL_TYPES = frozenset({NODE_GROUP, ASG, NODE_POOL})

KEY_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
KEY_FAMILY = "karpenter.k8s.aws/instance-family"
KEY_GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
KEY_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
KEY_CAPACITY_TYPE = "karpenter.sh/capacity-type"
GPU_RESOURCE = "nvidia.com/gpu"
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


def type_refs(resource_type: str, props: Any) -> list[TypeRef]:
    """Instance types named on this resource's capacity paths (Karpenter: ``In`` instance-type requirements)."""
    if resource_type == NODE_GROUP:
        return [TypeRef(f"instanceTypes[{i}]", t) for i, t in enumerate(strings(get(props, "instanceTypes")))]
    if resource_type in (LAUNCH_TEMPLATE, INSTANCE, SPOT_REQUEST):
        t = text(get(props, "instanceType"))
        return [TypeRef("instanceType", t)] if t else []
    if resource_type == ASG:
        overrides = get(props, "mixedInstancesPolicy", "launchTemplate", "overrides")
        refs = []
        for i, o in enumerate(items(overrides)):
            t = text(get(o, "instanceType"))
            if t:
                refs.append(TypeRef(f"mixedInstancesPolicy.launchTemplate.overrides[{i}].instanceType", t))
        return refs
    if resource_type == NODE_POOL:
        return [
            TypeRef(f"spec.template.spec.requirements[{i}]", t)
            for i, r in requirements(props)
            if text(get(r, "key")) == KEY_INSTANCE_TYPE and text(get(r, "operator")) == "In"
            for t in strings(get(r, "values"))
        ]
    return []


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
    return frozenset(s.family for s in catalog.get_catalog() if s.accelerator.lower().split("-")[0] == wanted)


def nodepool_families(props: Any) -> tuple[set[str] | None, str]:
    """Families a NodePool may launch and the requirement that bounds them; None when unconstrained."""
    bounds: list[tuple[set[str], str]] = []
    types = requirement_values(props, KEY_INSTANCE_TYPE)
    if types is not None:
        bounds.append(({family(t) for t in types}, KEY_INSTANCE_TYPE))
    fams = requirement_values(props, KEY_FAMILY)
    if fams is not None:
        bounds.append((set(fams), KEY_FAMILY))
    names = requirement_values(props, KEY_GPU_NAME)
    if names is not None:
        bounds.append(({f for n in names for f in families_for_gpu_name(n)}, KEY_GPU_NAME))
    if not bounds:
        return None, ""
    # Requirements intersect: the tightest bound is what Karpenter can launch.
    narrowest = min(bounds, key=lambda b: len(b[0]))
    return narrowest


def nodepool_is_gpu(props: Any) -> bool:
    """A NodePool that can carry GPU work: GPU limits, a GPU taint, or a GPU requirement."""
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
    return any(is_accelerated(t) for t in types) or any(family_is_accelerated(f) for f in fams)


def max_size(resource_type: str, props: Any) -> int | None:
    if resource_type == NODE_GROUP:
        return integer(get(props, "scalingConfig", "maxSize"))
    if resource_type == ASG:
        return integer(get(props, "maxSize"))
    return None


def min_size(resource_type: str, props: Any) -> int | None:
    if resource_type == NODE_GROUP:
        return integer(get(props, "scalingConfig", "minSize"))
    if resource_type == ASG:
        return integer(get(props, "minSize"))
    return None


def workload(resource_type: str, props: Any, label_keys: list[str]) -> str:
    """The pool's workload kind from its node labels or tags (training, inference, ...); "" when unmarked."""
    sources: list[Mapping[str, Any]] = []
    if resource_type == NODE_POOL:
        labels = get(props, "spec", "template", "metadata", "labels")
        if isinstance(labels, Mapping):
            sources.append(labels)
    else:
        labels = get(props, "labels")
        if isinstance(labels, Mapping):
            sources.append(labels)
        sources.append(tags_of(props))
        if resource_type == ASG:
            sources.append({text(get(t, "key")): get(t, "value") for t in maps(get(props, "tags"))})
    for source in sources:
        for key in label_keys:
            if key in keys(source):
                value = source[key]
                if isinstance(value, str):
                    return value.strip().lower()
    return ""
