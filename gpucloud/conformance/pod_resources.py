"""Pod resources conformance: GPU and Neuron pods request CPU and memory.

A container that asks only for accelerators (`nvidia.com/gpu`, `nvidia.com/mig-*`, `aws.amazon.com/neuron*`)
has no CPU or memory request: the scheduler packs it beside anything, the kubelet puts the pod in the BestEffort
or Burstable class with a zero request, and under node pressure it is among the first evicted, taking a
multi-hour job and its GPUs with it. Kubernetes counts a limit as the request where only the limit is set
(kubernetes.io, "Resource Management for Pods and Containers"), and fills requests from a namespace's LimitRange
`defaultRequest` / `default` at admission; a pod-level `spec.resources` (PodLevelResources) covers every container.
Each of those counts as a request here.

Severity: an error where the pod is gpucloud's own (the object, or the Release rendering it, sits under a
`gpucloud:` component in its URN's type chain: gpucloud chose its resources and must set them), a warning for
everyone else's pods, which gpucloud cannot size.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import KObject, containers, objects, pod_sets
from gpucloud.fleet import labels as L

CHECK = "pod.resources"
SOURCE = "Kubernetes 1.34, Resource Management for Pods and Containers; LimitRange defaults"
ACCELERATOR_EXACT = (L.NVIDIA_GPU,)
# MIG slices (nvidia.com/mig-1g.10gb ...) and every Neuron resource (neuron, neuroncore, neurondevice).
ACCELERATOR_PREFIXES = ("nvidia.com/mig-", L.NEURON)
NEEDED = ("cpu", "memory")


def accelerators(resources: Any) -> list[str]:
    """The accelerator resource names a container's `resources` asks for (requests or limits)."""
    if not isinstance(resources, Mapping):
        return []
    names: set[str] = set()
    for part in ("requests", "limits"):
        block = resources.get(part)
        if isinstance(block, Mapping):
            names |= {str(k) for k in block if str(k) in ACCELERATOR_EXACT or str(k).startswith(ACCELERATOR_PREFIXES)}
    return sorted(names)


def requested(resources: Any) -> set[str]:
    """Resources with a request, counting a limit as the request (Kubernetes copies it when none is given)."""
    out: set[str] = set()
    if isinstance(resources, Mapping):
        for part in ("requests", "limits"):
            block = resources.get(part)
            if isinstance(block, Mapping):
                out |= {str(k) for k, v in block.items() if v is not None}
    return out


def gpucloud_owned(urn: str) -> bool:
    """True when a `gpucloud:` component is among the parents in the URN's type chain."""
    parts = urn.split("::")
    chain = parts[2].split("$") if len(parts) >= 4 else []
    return any(t.startswith("gpucloud:") for t in chain[:-1])


def _limit_range_defaults(objs: list[KObject]) -> dict[str, set[str]]:
    """Namespace -> resources a LimitRange of the plan fills in for containers that request none."""
    out: dict[str, set[str]] = {}
    for obj in objs:
        if obj.kind != "LimitRange":
            continue
        for limit in obj.spec.get("limits") or []:
            if not isinstance(limit, Mapping) or limit.get("type", "Container") != "Container":
                continue
            for key in ("defaultRequest", "default"):
                block = limit.get(key)
                if isinstance(block, Mapping):
                    out.setdefault(obj.namespace, set()).update(str(k) for k in block)
    return out


@register_check(CHECK)
def check_pod_resources(ctx: ConformanceContext) -> Iterator[Finding]:
    objs = objects(ctx)
    defaults = _limit_range_defaults(objs)
    for obj in objs:
        for ps in pod_sets(obj):
            spec = ps.pod_spec
            pod_level = requested(spec.get("resources"))
            for i, container in enumerate(containers(spec)):
                wanted = accelerators(container.get("resources"))
                if not wanted:
                    continue
                have = requested(container.get("resources")) | pod_level | defaults.get(obj.namespace, set())
                missing = [r for r in NEEDED if r not in have]
                if not missing:
                    continue
                own = gpucloud_owned(obj.urn)
                yield Finding(
                    check=CHECK,
                    severity="error" if own else "warning",
                    urn=obj.urn,
                    object=obj.ref,
                    field=f"{ps.path}.containers[{container.get('name', i)}].resources.requests",
                    message=f"{ps.name}: container {container.get('name', i)!r} asks for {', '.join(wanted)} but "
                    f"requests no {' or '.join(missing)}: it is scheduled as if it needed none and is among the "
                    "first evicted under node pressure" + (" (a gpucloud component deploys it)" if own else ""),
                    expected=f"resources.requests.{missing[0]} (and a limit) on every accelerator container",
                    source=SOURCE,
                )
