"""The upgrade path of a platform stack to a newer Kubernetes minor: ordered steps, each a stack spec.

Per minor, in the order EKS and the version skew policy allow:

1. **control plane**: `cluster.kubernetesVersion` moves one minor. Everything else is held where it runs: the
   add-ons at their current builds (`cluster.addonVersions`), the system nodes and every GPU pool at the old
   kubelet minor and AMI release (their `kubernetesVersion` / `amiRelease`). The Cluster Autoscaler moves with the
   control plane: it runs only against its own minor.
2. **add-ons**: the held builds are released, so each add-on takes the versions table's build for the new minor.
3. **system nodes**: the system node group moves to the new minor and its AMI release (a rolling replacement).
4. **GPU pools by priority**: one step per pool, the least disruptive first: inference and rendering pools (they
   serve behind replicas), then hpc and training pools, and pools on reserved capacity (Capacity Blocks, ODCRs)
   last, because they cannot surge and every replaced node is a drained, checkpointed job.

Each step's spec is the stack file's `gpucloud:platform` object with the step's changes applied, so a reviewer
applies the steps one pull request (and one `pulumi up`) at a time; `plan_steps` plans every step offline.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from gpucloud import versions
from gpucloud.spec import PlatformSpec, parse_platform
from gpucloud.spec.cluster import CORE_ADDONS

SCHEMA = "gpucloud.upgrade/v1"
_WORKLOAD_ORDER = {"inference": 0, "rendering": 1, "hpc": 2, "training": 3}


@dataclass
class Change:
    path: str  # dotted path in the stack file's gpucloud:platform object ("nodePools[train-h100].kubernetesVersion")
    before: Any  # None: the key is absent (the default applies)
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "before": self.before, "after": self.after}


@dataclass
class Step:
    number: int
    kind: str  # control-plane | addons | system-nodes | pool
    minor: str
    title: str
    changes: list[Change]
    disrupts: list[str]
    spec: dict[str, Any]
    base_minor: str  # the control plane's minor before this step's `pulumi up`
    plan: dict[str, Any] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.number,
            "kind": self.kind,
            "minor": self.minor,
            "title": self.title,
            "changes": [c.to_json() for c in self.changes],
            "disrupts": list(self.disrupts),
            "plan": self.plan,
            "spec": self.spec,
        }


class UpgradeError(Exception):
    """The target is not reachable from this spec (unknown minor, a downgrade); `str()` is the CLI message."""


def _pool_rank(pool: Any) -> tuple[int, int, str]:
    reserved = 1 if pool.capacity.reserved is not None else 0
    return reserved, _WORKLOAD_ORDER.get(pool.workload, 9), pool.name


def _set(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = doc
    for key in path[:-1]:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def _pool_entry(doc: dict[str, Any], name: str) -> dict[str, Any]:
    for entry in doc.get("nodePools") or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    raise UpgradeError(f"node pool {name} is not in the stack spec")


def _apply(doc: dict[str, Any], changes: list[Change]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for c in changes:
        if c.path.startswith("nodePools["):
            name, _, rest = c.path[len("nodePools[") :].partition("].")
            _set(_pool_entry(out, name), tuple(rest.split(".")), c.after)
        else:
            _set(out, tuple(c.path.split(".")), c.after)
    return out


def _pool_nodes(pool: Any) -> str:
    spec = pool.specs[0]
    per = f", {spec.accelerator_count} {spec.accelerator} each" if spec.accelerator_count else ""
    return f"up to {pool.max_size} {'/'.join(pool.instance_types)} nodes{per}"


def upgrade_path(doc: dict[str, Any], target: str) -> list[Step]:
    """The ordered steps from the spec `doc` (a stack file's gpucloud:platform object) to Kubernetes `target`."""
    spec = parse_platform(copy.deepcopy(doc))
    current = spec.cluster.kubernetes_version
    known = versions.minors()
    if target not in known:
        raise UpgradeError(f"--to {target}: the versions table carries Kubernetes {', '.join(known)}; pick one of them")
    if versions.minor_distance(target, current) < 0:
        raise UpgradeError(f"--to {target}: the stack runs {current}; EKS cannot downgrade a cluster")
    steps: list[Step] = []
    state = copy.deepcopy(doc)
    minor = current
    while versions.minor_distance(target, minor) > 0:
        new = versions.next_minor(minor)
        steps.extend(_minor_steps(state, parse_platform(copy.deepcopy(state)), minor, new, len(steps)))
        state = steps[-1].spec
        minor = new
    return steps


def _minor_steps(doc: dict[str, Any], spec: PlatformSpec, old: str, new: str, offset: int) -> list[Step]:
    cluster = spec.cluster
    old_row, new_row = versions.for_minor(old), versions.for_minor(new)
    steps: list[Step] = []

    def add(kind: str, title: str, changes: list[Change], disrupts: list[str], base: str) -> None:
        source = steps[-1].spec if steps else doc
        steps.append(Step(offset + len(steps) + 1, kind, new, title, changes, disrupts, _apply(source, changes), base))

    # 1. control plane, everything else held where it runs.
    held: list[Change] = [Change("cluster.kubernetesVersion", old, new)]
    for addon in CORE_ADDONS:
        if addon not in cluster.addon_versions:
            held.append(Change(f"cluster.addonVersions.{addon}", None, cluster.addon_version(addon)))
    system = cluster.system_node_group
    if system.kubernetes_version is None:
        held.append(Change("cluster.systemNodeGroup.kubernetesVersion", None, old))
    if system.ami_release is None:
        held.append(Change("cluster.systemNodeGroup.amiRelease", None, cluster.ami_release(system.ami_family, old)))
    for pool in spec.node_pools:
        if pool.kubernetes_version is None:
            held.append(Change(f"nodePools[{pool.name}].kubernetesVersion", None, old))
        if pool.ami.release is None and pool.ami.id is None:
            held.append(Change(f"nodePools[{pool.name}].ami.release", None, cluster.ami_release(pool.ami.family, old)))
    ca_old, ca_new = old_row.charts.get("cluster-autoscaler"), new_row.charts.get("cluster-autoscaler")
    disrupts = [
        f"EKS updates the control plane to {new} (the API server stays available; about 10 minutes or more); "
        "nodes, add-ons and workloads keep running",
    ]
    if ca_old and ca_new and spec.addons.resolved_autoscaler(spec.node_pools) == "cluster-autoscaler":
        disrupts.append(
            f"the Cluster Autoscaler moves with it (chart {ca_old.version} -> {ca_new.version}"
            + (f", image {ca_new.image_tag}" if ca_new.image_tag else "")
            + "): its pod restarts, scale-ups wait for it"
        )
    add("control-plane", f"control plane {old} -> {new}", held, disrupts, old)

    # 2. add-ons take the new minor's builds.
    released = [c for c in held if c.path.startswith("cluster.addonVersions.")]
    addon_changes = [Change(c.path, c.after, None) for c in released]
    moved = []
    for c in released:
        name = c.path.rsplit(".", 1)[-1]
        build = new_row.addons[name].version
        if build != c.after:
            moved.append(f"{name} {c.after} -> {build}: its pods roll")
    if addon_changes:
        add(
            "addons",
            f"EKS add-ons to the {new} builds",
            addon_changes,
            moved or ["none: every add-on's build for the new minor is the one it runs; the pins go, nothing rolls"],
            new,
        )

    # 3. system nodes.
    sys_changes = [Change(c.path, c.after, None) for c in held if c.path.startswith("cluster.systemNodeGroup.")]
    if sys_changes:
        add(
            "system-nodes",
            f"system node group to {new}",
            sys_changes,
            [
                f"the system nodes ({system.desired_size} x {system.instance_type} at creation) are replaced one "
                "at a time (maxUnavailable 1): controllers and CoreDNS move to the new nodes",
                f"AMI release {cluster.ami_release(system.ami_family, old)} -> "
                f"{new_row.ami[system.ami_family].version}",
            ],
            new,
        )

    # 4. GPU pools, least disruptive first.
    for pool in sorted(spec.node_pools, key=_pool_rank):
        prefix = f"nodePools[{pool.name}]."
        changes = [Change(c.path, c.after, None) for c in held if c.path.startswith(prefix)]
        if not changes:
            continue
        reserved = pool.capacity.reserved
        if pool.backend == "karpenter":
            how = (
                "Karpenter drifts the nodes to the new AMI at the pool's rollout pace (a reservation-only pool: as "
                "its nodes expire or empty out)"
            )
        elif reserved is not None:
            how = (
                f"no surge on {reserved.kind} capacity: each node is cordoned, drained (jobs checkpoint and stop) "
                "and replaced before the next"
            )
        else:
            how = (
                "nodes are cordoned, drained and replaced at the pool's rollout pace (rollout.maxUnavailable; "
                "default one node at a time for training/HPC, a quarter of a group for inference/rendering)"
            )
        add(
            "pool",
            f"GPU pool {pool.name} ({pool.workload}) to {new}",
            changes,
            [
                f"{_pool_nodes(pool)} rolled: {how}",
                f"AMI release {cluster.ami_release(pool.ami.family, old)} -> {new_row.ami[pool.ami.family].version}",
            ],
            new,
        )
    return steps


def plan_steps(steps: list[Step], program_dir: Any, stack: str) -> None:
    """Plan every step's spec offline (with the previous control plane as the base) and record its verdict."""
    from gpucloud.conformance import run_conformance
    from gpucloud.plan import run_program

    for step in steps:
        plan = run_program(program_dir, stack, config_overrides={"gpucloud:platform": step.spec})
        checked = run_conformance(plan, base_kubernetes_version=step.base_minor)
        step.plan = {
            "resources": len(plan.resources),
            "conformance_errors": len(checked.errors),
            "conformance_warnings": len(checked.warnings),
            "errors": [f"{f.check}: {f.message}" for f in checked.errors],
        }


__all__ = ["SCHEMA", "Change", "Step", "UpgradeError", "plan_steps", "upgrade_path"]
