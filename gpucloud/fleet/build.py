"""A plan's resources turned into pools (gpucloud.fleet.model.Pool), every launch path joined.

Each resource that starts instances is joined, by URN (ids are unknown at preview), to what describes its nodes:
the launch template (node group, ASG, instance, fleets) or launch configuration, the subnets, the capacity
reservations, the provider (for the region), and for Karpenter NodePools their EC2NodeClass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpucloud.catalog import Catalog
from gpucloud.fleet import labels as L
from gpucloud.fleet import model as M
from gpucloud.fleet import types as T
from gpucloud.fleet.joins import Index, Record, _object_record
from gpucloud.fleet.karpenter import karpenter
from gpucloud.fleet.paths import BUILDERS
from gpucloud.fleet.values import get, is_list, mappings, text


class Fleet(Index):
    """A plan's resources indexed for the joins; ``pools()`` is the typed view every reader takes."""

    # ---- pools -------------------------------------------------------------------------------------------
    def pools(self) -> list[M.Pool]:
        out: list[M.Pool] = []
        for r in self.records:
            builder = BUILDERS.get(r.type)
            if builder is not None:
                out.append(self.finish(builder(self, r)))
        classes = self._node_classes()
        for obj in self._nodepool_objects():
            out.append(self.finish(karpenter(self, obj, classes)))
        return out

    def _node_classes(self) -> dict[str, Record]:
        found = {
            text(get(r.inputs, "metadata.name")) or r.name: r for r in self.records if r.type in T.EC2_NODE_CLASSES
        }
        for i, obj in enumerate(self.objects):
            if obj.get("kind") == "EC2NodeClass" and str(obj.get("apiVersion", "")).startswith("karpenter.k8s.aws/"):
                name = text(get(obj, "metadata.name")) or f"object-{i}"
                found.setdefault(name, _object_record(obj, i))
        return found

    def _nodepool_objects(self) -> list[Record]:
        found = [r for r in self.records if r.type in T.KARPENTER_NODEPOOLS]
        for i, obj in enumerate(self.objects):
            if obj.get("kind") == "NodePool" and str(obj.get("apiVersion", "")).startswith("karpenter.sh/"):
                found.append(_object_record(obj, i))
        return found

    def finish(self, pool: M.Pool) -> M.Pool:
        specs = {t: s for t in pool.instance_types if (s := self.catalog.find(t)) is not None}
        pool.specs = specs
        pool.accelerators = tuple(
            M.Accelerator(
                instance_type=t,
                name=s.accelerator,
                label=L.accelerator_label(s),
                manufacturer=s.manufacturer,
                kind=s.accelerator_kind,
                count=s.accelerator_count,
                memory_gib=s.accelerator_memory_gib,
                resource=L.accelerator_resource(s),
            )
            for t, s in specs.items()
            if s.accelerator_count > 0
        )
        pool.labels = L.normalize_labels(pool.labels)
        if not pool.marks:
            pool.marks = _marks(self.by_urn.get(pool.urn))
        if not pool.named_types and not pool.requirements and pool.path != M.KARPENTER:
            pool.named_types = pool.instance_types
        return pool


def pools(
    resources: Iterable[Any],
    objects: Iterable[Mapping[str, Any]] = (),
    *,
    region: str | None = None,
    catalog: Catalog | None = None,
) -> list[M.Pool]:
    """Every pool a plan launches, in registration order (Karpenter NodePools rendered from charts last)."""
    return Fleet(resources, objects, region=region, catalog=catalog).pools()


# Cluster Autoscaler reads an ASG's node labels from these tags (scale-from-zero templates).
NODE_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"


def _marks(r: Record | None) -> tuple[Mapping[str, Any], ...]:
    """Node labels the resource sets (node group ``labels``), then its tags: a tag map, or an ASG's tag list
    with the Cluster Autoscaler node-template label prefix taken off."""
    if r is None:
        return ()
    sources: list[Mapping[str, Any]] = []
    labels = r.inputs.get("labels")
    if isinstance(labels, Mapping):
        sources.append(labels)
    tags = r.inputs.get("tags")
    if isinstance(tags, Mapping):
        sources.append(tags)
    elif is_list(tags):
        pairs = {str(t.get("key")): t.get("value") for t in mappings(tags)}
        sources.append({k.removeprefix(NODE_TEMPLATE_LABEL): v for k, v in pairs.items()})
    return tuple(sources)
