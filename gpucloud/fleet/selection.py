"""Requirement sets resolved to instance types: Karpenter NodePool requirements and EC2 attribute-based
instance requirements (InstanceRequirements), each against the catalog's facts."""

from __future__ import annotations

import fnmatch
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from gpucloud.catalog import Catalog, InstanceSpec
from gpucloud.fleet import labels as L
from gpucloud.fleet.values import get, is_list, number, strings, text
from gpucloud.fleet.values import quantity as parse_quantity

# Labels every EC2 type has whose value only a catalog record gives: for a type outside the catalog a
# requirement on them is undecided, and admits the type (a ceiling errs high, never low).
_UNKNOWN_WITHOUT_SPEC: Final = frozenset(
    {L.INSTANCE_CPU, L.INSTANCE_MEMORY, L.INSTANCE_HYPERVISOR, L.INSTANCE_CPU_MANUFACTURER, L.INSTANCE_LOCAL_NVME}
)
_ACCELERATOR_KEYS: Final = frozenset(
    {
        L.INSTANCE_GPU_NAME,
        L.INSTANCE_GPU_MANUFACTURER,
        L.INSTANCE_GPU_COUNT,
        L.INSTANCE_GPU_MEMORY,
        L.INSTANCE_ACCELERATOR_NAME,
        L.INSTANCE_ACCELERATOR_MANUFACTURER,
        L.INSTANCE_ACCELERATOR_COUNT,
    }
)


def requirement(req: Any) -> tuple[str, str, list[str]] | None:
    """(normalised key, operator, known values) of one node-selector requirement; None when it is not one."""
    if not isinstance(req, Mapping):
        return None
    key, op = text(req.get("key")), text(req.get("operator"))
    if key is None or op is None:
        return None
    return L.normalize(key), op, strings(req.get("values"))


def narrows(key: str) -> bool:
    """Whether a requirement on ``key`` narrows the instance types (zone, capacity type, OS and custom labels
    do not: every type can carry them)."""
    return key in L.INSTANCE_LABELS


@functools.lru_cache(maxsize=8192)
def _labels(instance_type: str, spec: InstanceSpec | None) -> Mapping[str, str]:
    # A NodePool's requirements are matched against every catalog type, for every NodePool of every plan: the
    # labels of a type are a pure function of its spec, so they are built once (read-only, shared).
    return MappingProxyType(L.instance_labels(spec) if spec is not None else L.type_labels(instance_type))


def type_admits(instance_type: str, spec: InstanceSpec | None, reqs: Iterable[tuple[str, str, list[str]]]) -> bool:
    """Whether a NodePool's requirements admit one type. A type outside the catalog has the labels its name
    gives, no accelerator labels, and undecided CPU / memory labels (which admit it)."""
    have = _labels(instance_type, spec)
    for raw_key, op, values in reqs:
        key = L.normalize(raw_key)
        if not narrows(key):
            continue
        if spec is None and key in _UNKNOWN_WITHOUT_SPEC:
            continue
        if not L.requirement_matches(have, key, op, values):
            return False
    return True


def explicit_types(reqs: Sequence[tuple[str, str, list[str]]]) -> list[str] | None:
    """The types ``node.kubernetes.io/instance-type In`` lists (the intersection of several); None without."""
    found: list[str] | None = None
    for key, op, values in reqs:
        if key == L.INSTANCE_TYPE and op == "In":
            found = list(values) if found is None else [t for t in found if t in values]
    return found


def nodepool_types(catalog: Catalog, raw: Any) -> tuple[tuple[str, ...], bool]:
    """(types the requirements admit, whether types outside the catalog are admitted too).

    With an ``instance-type In`` list the listed types that pass the other requirements; else the catalog's
    types that pass, and open when a type without accelerators (any type outside the catalog) could pass.
    """
    reqs = [r for r in (requirement(q) for q in (raw if is_list(raw) else [])) if r is not None]
    listed = explicit_types(reqs)
    if listed is not None:
        return tuple(t for t in dict.fromkeys(listed) if type_admits(t, catalog.find(t), reqs)), False
    admitted = tuple(s.instance_type for s in catalog if type_admits(s.instance_type, s, reqs))
    return admitted, _admits_plain_types(catalog, reqs)


def _admits_plain_types(catalog: Catalog, reqs: Sequence[tuple[str, str, list[str]]]) -> bool:
    families = {s.family for s in catalog}
    for key, op, values in reqs:
        if key in _ACCELERATOR_KEYS and op in ("In", "Exists", "Gt", "Lt", "Gte", "Lte"):
            return False
        if key == L.INSTANCE_FAMILY and op == "In" and set(values) <= families:
            return False
    return True


# ---- EC2 attribute-based instance selection ------------------------------------------------------------------

# InstanceRequirements spellings (botocore ec2 AcceleratorManufacturer / AcceleratorType enums).
_ABS_MANUFACTURER: Final = {"aws": "amazon-web-services"}
_ABS_KIND: Final = {"gpu": "gpu", "neuron": "inference"}


def _range(bounds: Any) -> tuple[float | None, float | None]:
    """An attribute-based ``{min, max}`` range; a missing side is open (EC2 InstanceRequirements semantics)."""
    return number(get(bounds, "min")), number(get(bounds, "max"))


def _in(value: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or value >= lo) and (hi is None or value <= hi)


_AbsParams = tuple[Any, ...]


def _abs_params(req: Any) -> _AbsParams:
    """The requirement read once, in the order abs_admits always read it (so an unknown value raises the same
    error first), as a hashable value."""
    count_range = _range(get(req, "acceleratorCount")) if get(req, "acceleratorCount") is not None else None
    memory_total = (
        _range(get(req, "acceleratorTotalMemoryMib")) if get(req, "acceleratorTotalMemoryMib") is not None else None
    )
    vcpu_range = _range(get(req, "vcpuCount")) if get(req, "vcpuCount") is not None else None
    memory_range = _range(get(req, "memoryMib")) if get(req, "memoryMib") is not None else None
    manufacturers = frozenset(strings(get(req, "acceleratorManufacturers")))
    names = frozenset(n.lower() for n in strings(get(req, "acceleratorNames")))
    kinds = frozenset(strings(get(req, "acceleratorTypes")))
    allowed = tuple(strings(get(req, "allowedInstanceTypes")))
    excluded = tuple(strings(get(req, "excludedInstanceTypes")))
    return (count_range, memory_total, vcpu_range, memory_range, manufacturers, names, kinds, allowed, excluded)


def _abs_matcher(params: _AbsParams) -> Callable[[InstanceSpec], bool]:
    """A test of one catalog type against a requirement read by _abs_params."""
    count_range, memory_total, vcpu_range, memory_range, manufacturers, names, kinds, allowed, excluded = params

    def admits(spec: InstanceSpec) -> bool:
        count = spec.accelerator_count
        if count_range is not None and not _in(count, *count_range):
            return False
        if memory_total is not None and not _in(count * spec.accelerator_memory_gib * 1024, *memory_total):
            return False
        if vcpu_range is not None and not _in(spec.vcpu, *vcpu_range):
            return False
        if memory_range is not None and not _in(spec.memory_gib * 1024, *memory_range):
            return False
        if manufacturers and _ABS_MANUFACTURER.get(spec.manufacturer, spec.manufacturer) not in manufacturers:
            return False
        if names and not (count > 0 and L.accelerator_label(spec) in names):
            return False
        if kinds and not (count > 0 and _ABS_KIND.get(spec.accelerator_kind, spec.accelerator_kind) in kinds):
            return False
        if allowed and not any(fnmatch.fnmatchcase(spec.instance_type, p) for p in allowed):
            return False
        return not (excluded and any(fnmatch.fnmatchcase(spec.instance_type, p) for p in excluded))

    return admits


def abs_admits(req: Any, spec: InstanceSpec) -> bool:
    """EC2 attribute-based instance selection (InstanceRequirements in the EC2 API reference): every attribute
    left out admits any value, accelerators included, so only what is written narrows the set. Accelerator
    names are EC2's (``a100``, ``trainium2``), the catalog's ``ec2_accelerator_name``."""
    return _abs_matcher(_abs_params(req))(spec)


# abs_types' answers by (catalog, requirement): a catalog scan is about 2 ms, and the pool model, the count cap,
# the family allowlist and the pricer each ask it for the same requirement of a plan.
_ABS_TYPES: dict[tuple[int, _AbsParams], tuple[Catalog, tuple[str, ...]]] = {}
_ABS_TYPES_LIMIT = 1024


def abs_types(catalog: Catalog, req: Any) -> tuple[str, ...]:
    # The requirement is read once for the whole catalog, not once per type (each read walks a proxy); an empty
    # catalog admits nothing whatever the requirement says, so it reads nothing.
    if not len(catalog):
        return ()
    params = _abs_params(req)
    key = (id(catalog), params)
    hit = _ABS_TYPES.get(key)
    if hit is not None and hit[0] is catalog:  # the memo holds the catalog, so its id cannot pass to another
        return hit[1]
    admits = _abs_matcher(params)
    found = tuple(s.instance_type for s in catalog if admits(s))
    if len(_ABS_TYPES) >= _ABS_TYPES_LIMIT:
        _ABS_TYPES.clear()
    _ABS_TYPES[key] = (catalog, found)
    return found


# ---- Karpenter limits ----------------------------------------------------------------------------------------


def quantity(value: Any) -> float | None:
    """A Kubernetes resource quantity as a non-negative number (gpucloud.fleet.values.quantity, apimachinery's
    grammar), or None when it is not one: a negative size or limit bounds nothing."""
    n = parse_quantity(value)
    return n if n is not None and n >= 0 else None


def limit_nodes(limits: Mapping[str, Any], spec: InstanceSpec | None) -> int | None:
    """Nodes of one type a NodePool's limits allow, or None when no limit bounds it.

    Karpenter's scheduler drops instance types that would exceed the pool's remaining limits, so each limit
    allows floor(limit / per-node capacity) nodes and the tightest one wins.
    """
    counts: list[int] = []
    for key, raw in limits.items():
        limit = quantity(raw)
        if limit is None:
            continue
        if key == "cpu":
            per_node = float(spec.vcpu) if spec is not None else 0.0
        elif key == "memory":
            per_node = spec.memory_gib * 2**30 if spec is not None else 0.0
        elif key in L.ACCELERATOR_RESOURCES:
            if spec is None or L.accelerator_resource(spec) != key:
                # A type without this device consumes none of the limit; it is bounded only by the others.
                continue
            per_node = float(spec.accelerator_count)
        else:
            continue
        if per_node > 0:
            counts.append(math.floor(limit / per_node + 1e-9))
    return min(counts) if counts else None
