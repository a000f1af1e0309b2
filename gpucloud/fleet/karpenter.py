"""Karpenter NodePools (karpenter.sh v1 and v1beta1) with their EC2NodeClass (v1 and v1beta1) as pools."""

from __future__ import annotations

from collections.abc import Mapping

from gpucloud.fleet import labels as L
from gpucloud.fleet import model as M
from gpucloud.fleet import selection
from gpucloud.fleet.bootstrap import parse_user_data
from gpucloud.fleet.joins import Index, Record
from gpucloud.fleet.paths import _bootstrap_into
from gpucloud.fleet.values import (
    count,
    flag,
    get,
    is_unknown,
    known,
    mappings,
    obj,
    tag_map,
    text,
)


def karpenter(fleet: Index, r: Record, classes: Mapping[str, Record]) -> M.Pool:
    manifest = r.inputs
    spec = obj(manifest.get("spec"))
    template = obj(spec.get("template"))
    tspec = obj(template.get("spec"))
    name = text(get(manifest, "metadata.name")) or r.name
    pool = M.Pool(r.urn, name, r.type, M.KARPENTER, types_from="spec.template.spec.requirements", region=fleet.region)
    raw_reqs = tspec.get("requirements")
    if not isinstance(raw_reqs, list):
        raw_reqs = []
        if is_unknown(tspec.get("requirements")):
            pool.unknown["instance_types"] = "spec.template.spec.requirements"
    pool.requirements = tuple(q for q in raw_reqs if isinstance(q, Mapping))
    pool.instance_types, pool.types_open = selection.nodepool_types(fleet.catalog, raw_reqs)
    reqs = [q for q in (selection.requirement(x) for x in raw_reqs) if q is not None]
    pool.named_types = tuple(selection.explicit_types(reqs) or ())
    markets = [v for key, op, values in reqs if key == L.CAPACITY_TYPE and op == "In" for v in values]
    # Karpenter launches On-Demand when a NodePool leaves karpenter.sh/capacity-type out.
    pool.markets = tuple(m for m in (M.ON_DEMAND, M.SPOT, M.RESERVED) if m in markets) or (M.ON_DEMAND,)
    zones = [v for key, op, values in reqs if key == L.ZONE and op == "In" for v in values]
    pool.zones = frozenset(zones) or None
    limits = spec.get("limits")
    pool.limits = dict(limits) if isinstance(limits, Mapping) else {}
    expected = count(spec.get("replicas"))
    annotations = get(manifest, "metadata.annotations")
    if expected is None and isinstance(annotations, Mapping):
        expected = count(annotations.get(L.EXPECTED_NODES))
    pool.counts = M.Counts(0, expected, None)
    # The template's labels win over the NodePool object's own (both mark what the pool is for).
    pool.marks = tuple(
        m for m in (get(template, "metadata.labels"), get(manifest, "metadata.labels")) if isinstance(m, Mapping)
    )
    labels = get(template, "metadata.labels")
    pool.labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
    pool.labels[L.NODEPOOL] = name
    pool.taints = tuple(
        M.Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
        for t in mappings(tspec.get("taints"))
    )
    pool.startup_taints = tuple(
        M.Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
        for t in mappings(tspec.get("startupTaints"))
    )
    pool.update_strategy = dict(spec.get("disruption") or {})
    ref = obj(tspec.get("nodeClassRef"))
    pool.node_class = text(ref.get("name"))
    node_class = classes.get(pool.node_class or "")
    if node_class is not None:
        _node_class(pool, node_class)
    return pool


def _node_class(pool: M.Pool, nc: Record) -> None:
    """What an EC2NodeClass (v1 or v1beta1) says about the nodes: AMI, metadata, volumes, user data, tags."""
    spec = obj(nc.inputs.get("spec"))
    aliases = [text(t.get("alias")) for t in mappings(spec.get("amiSelectorTerms"))]
    alias = next((a for a in aliases if a), None)
    if alias:
        # v1 selects the AMI by alias, family@version ("al2023@v20240807", "bottlerocket@latest").
        pool.ami_family, _, pool.ami_release = alias.partition("@")
    else:
        pool.ami_family = text(spec.get("amiFamily")) or ""
        ids = [text(t.get("id")) for t in mappings(spec.get("amiSelectorTerms"))]
        pool.ami_release = next((i for i in ids if i), "")
    pool.metadata_options = dict(spec.get("metadataOptions") or {})
    devices = []
    for m in mappings(spec.get("blockDeviceMappings")):
        ebs = obj(m.get("ebs"))
        size = selection.quantity(ebs.get("volumeSize"))
        devices.append(
            M.BlockDevice(
                device_name=text(m.get("deviceName")),
                size_gib=round(size / 2**30) if size is not None and size >= 2**30 else count(ebs.get("volumeSize")),
                volume_type=text(ebs.get("volumeType")),
                iops=ebs.get("iops"),
                throughput=ebs.get("throughput"),
                encrypted=flag(ebs.get("encrypted")),
                kms_key_id=text(ebs.get("kmsKeyID")),
                delete_on_termination=flag(ebs.get("deleteOnTermination")),
                snapshot_id=text(ebs.get("snapshotID")),
            )
        )
    pool.block_devices = tuple(devices)
    pool.public_ip = flag(spec.get("associatePublicIPAddress"))
    raw = spec.get("userData")
    # EC2NodeClass userData is plain text that Karpenter merges with its own bootstrap.
    pool.user_data, pool.user_data_known = (str(raw) if known(raw) else None), raw is None or known(raw)
    boot = parse_user_data(raw)
    _bootstrap_into(pool, boot)
    pool.tags = tag_map(spec.get("tags"))
