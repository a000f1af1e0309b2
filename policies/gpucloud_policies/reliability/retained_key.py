"""GC-REL-102 retained-data-key: the KMS key that encrypts retained data is retained too.

Data kept on `pulumi destroy` (retain_on_delete or protect) is unreadable once its key is gone: a KMS key the
stack deletes is scheduled for deletion and, after its waiting period, nothing can decrypt the volumes, buckets or
file systems that survived. Pairs are found by URN (property dependencies on an `aws:kms/key:Key` of the stack),
never by ARN, which is unknown at preview. Data holders:

- buckets, FSx / EFS file systems and EBS volumes kept by their options (GC-REL-101's stores);
- a bucket's server-side encryption configuration, kept when the bucket it configures is;
- a Kubernetes StorageClass with `reclaimPolicy: Retain`: the volumes it provisions outlive the stack.

A key given as a literal ARN (not a resource of this stack) is someone else's: not judged.

In the Pulumi CLI `retainOnDelete` is invisible to policies, so a pair whose key or store is not protected cannot be
decided there and is reported as "can't run policy", never passed.
"""

from __future__ import annotations

import re
from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, text, unknown
from ..stack import linked, of_type
from .retain import STORES

KEY = T.KMS_KEY
SSE_CONFIGS = frozenset(
    {
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
    }
)
STORAGE_CLASSES = frozenset(
    {"kubernetes:storage.k8s.io/v1:StorageClass", "kubernetes:storage.k8s.io/v1beta1:StorageClass"}
)


def _kept(r: Any) -> bool:
    """Whether the resource survives `pulumi destroy`; raises when the options do not say (Pulumi CLI)."""
    if getattr(r.opts, "protect", False):
        return True
    retain = getattr(r.opts, "retain_on_delete", None)
    if retain is None:
        raise unknown("options.retainOnDelete")
    return bool(retain)


# The inputs through which a data holder names the key that encrypts it: kmsKeyId (FSx, EFS, EBS),
# serverSideEncryptionConfiguration(s) (inline bucket encryption), `rules` of a bucket's encryption configuration,
# a StorageClass's `parameters` (kmsKeyId). A key reached through another input (a name derived from its id) does
# not encrypt the data.
_ENCRYPTION_INPUT = re.compile(r"kms|encrypt", re.IGNORECASE)
_ENCRYPTION_INPUTS_BY_TYPE = {**{t: ("rules",) for t in SSE_CONFIGS}, **{t: ("parameters",) for t in STORAGE_CLASSES}}


def _keys(r: Any) -> list[Any]:
    found: dict[str, Any] = {}
    named = _ENCRYPTION_INPUTS_BY_TYPE.get(r.resource_type, ())
    for prop in r.property_dependencies or {}:
        if prop in named or _ENCRYPTION_INPUT.search(prop):
            for key in linked(r, prop, KEY):
                found[key.urn] = key
    return list(found.values())


def _holders(resources: list[Any], exempt: set[str]) -> list[tuple[Any, str, list[Any]]]:
    """(resource whose key matters, what it keeps, what decides that it is kept) for every data holder."""
    out: list[tuple[Any, str, list[Any]]] = []
    for r in of_type(resources, *STORES):
        if r.name not in exempt:
            out.append((r, "is retained on destroy", [r]))
    for r in of_type(resources, *SSE_CONFIGS):
        buckets = [b for b in linked(r, "bucket", *STORES) if b.name not in exempt]
        if buckets:
            out.append((r, f"encrypts the retained bucket {buckets[0].name}", buckets[:1]))
    for r in of_type(resources, *STORAGE_CLASSES):
        if r.name not in exempt and text(get(r.props, "reclaimPolicy")) == "Retain":
            out.append((r, "provisions volumes that are retained (reclaimPolicy Retain)", []))
    return out


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    exempt = set(cfg["exemptResources"])
    for holder, keeps, kept_by in _holders(list(args.resources), exempt):
        keys = _keys(holder)
        if not keys:
            continue
        with deciding(holder):
            if not all(_kept(r) for r in kept_by):
                continue  # the data goes with the stack: so may its key
            for key in keys:
                if _kept(key):
                    continue
                report(
                    holder.urn,
                    f"{keeps}, but its KMS key {key.name} is deleted with the stack: once the key's deletion "
                    "window ends, the kept data cannot be decrypted. Fix: retain the key too "
                    "(ResourceOptions(retain_on_delete=True), and protect=True in prod), or encrypt the data with "
                    "a key that outlives the stack.",
                )


GUARDRAIL = Guardrail(
    id="GC-REL-102",
    name="retained-data-key",
    description="A KMS key that encrypts retained data (kept buckets, file systems, volumes, Retain storage "
    "classes) must be retained on delete or protected.",
    category="reliability",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Give the key the same retention as the data it encrypts (retain_on_delete=True, protect in "
    "prod); gpucloud's cluster key is retained wherever the platform keeps data.",
    references=("gpucloud design principle 4", "AWS KMS: deleting a key makes data encrypted under it unrecoverable"),
    kind="stack",
    validate=validate,
    config={
        "exemptResources": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Data holders whose key may go with the stack (the data is worth nothing after it).",
        },
    },
)
