"""Volumes that Kubernetes objects make AWS create: PersistentVolumeClaims provisioned dynamically by their
StorageClass, a StatefulSet's volumeClaimTemplates (one claim per replica), and the claims the Prometheus
Operator creates for a Prometheus (replicas x shards) or an Alertmanager (replicas) with ``spec.storage``.

StorageClass provisioners (their drivers' docs):

* ``ebs.csi.aws.com`` (aws-ebs-csi-driver docs/parameters.md): an EBS volume of ``parameters.type`` (gp3 when
  absent), ``iops`` or ``iopsPerGB`` x size, ``throughput``; ``kubernetes.io/aws-ebs`` (the in-tree plugin,
  migrated to the CSI driver): gp2 when absent. Priced at the region's EBS rates;
* ``efs.csi.aws.com``: an access point on an existing file system, which bills by stored GB (usage-billed);
* ``fsx.csi.aws.com`` (aws-fsx-csi-driver docs): a new FSx for Lustre file system per claim, at the
  StorageClass's deploymentType / perUnitStorageThroughput / storageType, sized to the next valid capacity
  (FSx CreateFileSystem StorageCapacity: 1200 GiB, 2400 GiB, then steps of 2400 GiB for SSD SCRATCH_2 and
  PERSISTENT_1/2; other tiers are listed unpriced).

A claim with ``storageClassName: ""`` binds a pre-provisioned volume (billed where that volume is declared); a
class the plan does not declare is listed with its reason. Sizes are ``spec.resources.requests.storage`` rounded
up to whole GiB (EBS volumes are sized in GiB).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from gpucloud.cost.pricer import Pricer, prices
from gpucloud.fleet import selection
from gpucloud.fleet import types as T
from gpucloud.fleet.values import count, get, is_unknown, obj, text
from gpucloud.prices import rates

EBS_CSI: Final = "ebs.csi.aws.com"
EBS_IN_TREE: Final = "kubernetes.io/aws-ebs"
EFS_CSI: Final = "efs.csi.aws.com"
FSX_CSI: Final = "fsx.csi.aws.com"
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
# The EBS CSI driver's default volume type; the in-tree plugin's was gp2.
EBS_CSI_DEFAULT_TYPE: Final = "gp3"
FSX_STEP_SSD: Final = 2400
FSX_SSD_DEPLOYMENTS: Final = ("SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2")


def _classes(pricer: Pricer) -> dict[str, Mapping[str, Any]]:
    cached = pricer.shared.get("storage_classes")
    if cached is None:
        cached = {}
        for o in pricer.kube_objects():
            m = o.get("inputs") or {}
            if m.get("kind") == "StorageClass" and (name := text(get(m, "metadata.name"))):
                cached[name] = m
        pricer.shared["storage_classes"] = cached
    return dict(cached)


def _default_class(pricer: Pricer) -> str | None:
    for name, m in _classes(pricer).items():
        if str(obj(get(m, "metadata.annotations")).get(DEFAULT_CLASS_ANNOTATION)) == "true":
            return name
    return None


def _gib(value: Any) -> int | None:
    size = selection.quantity(value)
    return None if size is None else max(1, math.ceil(size / 2**30))


def claim(
    pricer: Pricer, r: Mapping[str, Any], claim_spec: Mapping[str, Any], label: str, desired: int, maximum: int
) -> None:
    """Price `desired`/`maximum` claims of one spec (a PVC's, a volumeClaimTemplate's)."""
    if desired == 0 and maximum == 0:
        return
    raw_class = claim_spec.get("storageClassName")
    if raw_class == "":
        return  # binds a pre-provisioned PersistentVolume: billed where that volume is declared
    if is_unknown(raw_class):
        pricer.skip(r, f"{label}: storageClassName is unknown at preview, so the volume it provisions is unknown")
        return
    cls_name = text(raw_class) or _default_class(pricer)
    if cls_name is None:
        pricer.skip(
            r,
            f"{label}: no storageClassName and the plan declares no default StorageClass: the cluster's default "
            "(if any) provisions it, which the plan does not show",
            "GiB-month",
        )
        return
    cls = _classes(pricer).get(cls_name)
    if cls is None:
        pricer.skip(
            r,
            f"{label}: StorageClass {cls_name} is not in the plan, so its provisioner and rate are unknown",
            "GiB-month",
        )
        return
    gib = _gib(get(claim_spec, "resources.requests.storage"))
    if gib is None:
        pricer.skip(r, f"{label}: resources.requests.storage is unknown at preview or not a quantity", "GiB-month")
        return
    provisioner = cls.get("provisioner")
    params = obj(cls.get("parameters"))
    if provisioner in (EBS_CSI, EBS_IN_TREE):
        default = EBS_CSI_DEFAULT_TYPE if provisioner == EBS_CSI else rates.EBS_DEFAULT_TYPE
        vol = str(params.get("type") or default).lower()
        if vol not in rates.EBS_VOLUME_TYPES:
            pricer.skip(r, f"{label}: StorageClass {cls_name} type {vol!r} is not an EBS volume type gpucloud prices")
            return
        iops: Any = params.get("iops")
        per_gb = selection.quantity(params.get("iopsPerGB"))
        if iops is None and per_gb is not None:
            iops = per_gb * gib
        pricer.volume(r, vol, gib, iops, params.get("throughput"), desired, maximum, f"{label} ({cls_name})")
        return
    if provisioner == EFS_CSI:
        pricer.skip(r, f"usage-billed: {label} is an EFS access point ({cls_name}); EFS bills stored GB", "GB-month")
        return
    if provisioner == FSX_CSI:
        _fsx(pricer, r, params, gib, label, cls_name, desired, maximum)
        return
    pricer.skip(r, f"{label}: StorageClass {cls_name} provisioner {provisioner!r} has no price rule in gpucloud")


def _fsx(
    pricer: Pricer,
    r: Mapping[str, Any],
    params: Mapping[str, Any],
    gib: int,
    label: str,
    cls_name: str,
    desired: int,
    maximum: int,
) -> None:
    deployment = str(params.get("deploymentType") or "SCRATCH_1")
    storage = str(params.get("storageType") or "SSD")
    throughput = count(params.get("perUnitStorageThroughput"))
    if storage != "SSD" or deployment not in FSX_SSD_DEPLOYMENTS:
        pricer.skip(r, f"{label}: FSx for Lustre {deployment} {storage} capacity rounding is not modelled")
        return
    size = 1200 if gib <= 1200 else 2400 if gib <= 2400 else FSX_STEP_SSD * math.ceil(gib / FSX_STEP_SSD)
    tier_key = (deployment, throughput if deployment.startswith("PERSISTENT") else None, storage)
    if tier_key not in rates.FSX_LUSTRE_TIERS:
        pricer.skip(r, f"{label}: no FSx for Lustre rate for {deployment} {storage} at {throughput} MB/s/TiB")
        return
    key = rates.fsx_lustre_key(*tier_key)
    rate = pricer.service_rate(r, key, rates.describe(key))
    if rate is not None:
        pricer.add(
            r,
            pricing="storage",
            quantity=desired * size,
            max_quantity=maximum * size,
            unit_price=rate.usd,
            unit="GiB-month",
            rate=rate,
            name=f"{label} ({cls_name}: FSx for Lustre {size} GiB)",
        )


def _label(r: Mapping[str, Any], inputs: Mapping[str, Any], kind: str) -> str:
    name = text(get(inputs, "metadata.name")) or str(r.get("name"))
    namespace = text(get(inputs, "metadata.namespace"))
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


@prices(T.K8S_PVC)
def persistent_volume_claim(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    claim(pricer, r, obj(inputs.get("spec")), _label(r, inputs, "PVC"), 1, 1)


def _replicas(value: Any, default: int = 1) -> int | None:
    return default if value is None else count(value)


@prices(T.K8S_STATEFULSET)
def stateful_set(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    spec = obj(inputs.get("spec"))
    templates = spec.get("volumeClaimTemplates")
    if not isinstance(templates, list) or not templates:
        return
    n = _replicas(spec.get("replicas"))
    label = _label(r, inputs, "StatefulSet")
    if n is None:
        pricer.skip(r, f"{label}: replicas is unknown at preview, so its volume claims are unpriced", "GiB-month")
        return
    for t in templates:
        claim_name = text(get(t, "metadata.name")) or "claim"
        pricer_label = f"{label} {claim_name} x{n}"
        claim(pricer, r, obj(obj(t).get("spec")), pricer_label, n, n)


@prices(T.PROMETHEUS_CR, T.ALERTMANAGER_CR)
def operator_storage(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    spec = obj(inputs.get("spec"))
    template = get(spec, "storage.volumeClaimTemplate")
    if not isinstance(template, Mapping):
        return  # emptyDir (the operator's default): the node's root volume, priced with the node
    kind = str(inputs.get("kind") or "Prometheus")
    # The operator runs replicas x shards StatefulSet pods for a Prometheus, replicas for an Alertmanager.
    n = _replicas(spec.get("replicas"))
    shards = _replicas(spec.get("shards")) if kind == "Prometheus" else 1
    label = _label(r, inputs, kind)
    if n is None or shards is None:
        pricer.skip(r, f"{label}: replicas/shards are unknown at preview, so its volume claims are unpriced")
        return
    claim(pricer, r, obj(template.get("spec")), f"{label} storage x{n * shards}", n * shards, n * shards)
