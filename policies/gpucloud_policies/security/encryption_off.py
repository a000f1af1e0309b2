"""GC-SEC-172 encryption-not-disabled: no resource turns its encryption off, or names an AWS-managed key where it
takes a key, on every type the surface inventory lists as holding data at rest.

Inventory-driven (surface_paths.py): for each type whose every data path the property names explain, the paths
the inventory lists are read and judged by what the name says, the same for every type:

- a flag (``encrypted``, ``storageEncrypted``, ``atRestEncryptionEnabled``, ``enableInterContainerTrafficEncryption``
  ...) set false, or ``encryptionDisabled`` set true, turns encryption off: an explicit choice, so a finding is
  certain. Unset is not judged here: many services now encrypt by default (SQS SSE-SQS, Kinesis Firehose, S3), and
  where a customer-managed key is required a dedicated guardrail asks for it (rds-encrypted-cmk, efs-encrypted-cmk,
  fsx-persistent-cmk). A service-managed encryption flag (SQS ``sqsManagedSseEnabled``) off beside a KMS key
  means KMS encryption instead, not none.
- an encryption mode or type set to ``NONE``, ``DISABLED`` or ``PLAINTEXT``, the spellings of "no encryption" in AWS
  enums (Kinesis ``EncryptionType``, Glue encryption modes, MSK ``ClientBroker``, MSK Connect, AS2 algorithms).
- a key field naming an AWS-managed key (``alias/aws/...``, readers/keys.py): the guardrail family asks for
  customer-managed keys, whose policy the account controls (``requireCustomerManagedKeys``).
- an object of encryption settings (``encryptionConfiguration``, ``nodeToNodeEncryption``, Firehose
  ``serverSideEncryption``) is judged field by field the same way, with ``enabled`` false as off.

Types some guardrail already names for this surface are left to it (registry.py narrows the declaration), so a
resource is judged once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import surface_paths as sp
from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Report,
    Severity,
    get,
    has,
    is_list,
    items,
    keys,
    present,
    strings,
)
from ..readers import keys as kms

JUDGED = frozenset({sp.FLAG, sp.INVERTED, sp.MODE, sp.KEY, sp.CONTAINER})
TYPES = sp.claimed("data", sp.data_kind, JUDGED)


def _is_key(name: str) -> bool:
    return sp.data_kind("", name) == sp.KEY


def _key_set(parent: Any) -> bool:
    """A sibling key field names a key that is not AWS-managed (the KMS encryption a managed flag gives way to)."""
    if not isinstance(parent, Mapping):
        return False
    return any(sp.data_kind("", k) == sp.KEY and kms.customer_managed(parent, k) for k in keys(parent))


def findings(kind: str, name: str, where: str, value: Any, parent: Any, cfg: Config) -> list[str]:
    """What is wrong with one value at one data path (empty when nothing is)."""
    if kind == sp.FLAG and sp.flag_off(value):
        if sp.managed_sse(name) and _key_set(parent):
            return []
        return [f"{where} is {value!r}: encryption is turned off. Fix: set it to true (or remove it)."]
    if kind == sp.INVERTED and sp.public_flag(value):
        return [f"{where} is {value!r}: encryption is turned off. Fix: set it to false (or remove it)."]
    if kind == sp.MODE and sp.mode_off(value):
        return [f"{where} is {value!r}: no encryption. Fix: choose an encrypting mode (a KMS one where offered)."]
    if kind == sp.KEY and cfg["requireCustomerManagedKeys"]:
        shown = [v for v in strings(value) if kms.aws_managed(v)]
        return [
            f"{where} is {v!r}, an AWS-managed key alias (alias/aws/...), not a customer-managed key. Fix: name a "
            "customer-managed KMS key, whose key policy the account controls."
            for v in shown
        ]
    if kind == sp.CONTAINER and isinstance(value, Mapping):
        out: list[str] = []
        for path, inner, v in sp.walk_object(value, where, _is_key):
            inner_kind = sp.data_kind("", inner)
            if inner_kind in JUDGED and inner_kind != sp.CONTAINER:
                # A key anywhere in the same settings object is the one a managed-SSE flag gives way to.
                out += findings(inner_kind, inner, path, v, value, cfg)
        return out
    return []


def validate(args: Any, report: Report, cfg: Config) -> None:
    props = args.props
    for path in sp.paths_of(args.resource_type, "data"):
        kind = sp.data_kind(args.resource_type, path)
        if kind not in JUDGED:
            continue
        name = sp.leaf(path)
        parent_path = path.rsplit(".", 1)[0] if "." in path else ""
        parents = list(sp.values(props, parent_path)) if parent_path else [("", props)]
        for base, parent in parents:
            if not isinstance(parent, Mapping) or not has(parent, name):
                continue
            if kind == sp.KEY and not present(parent, name):
                continue
            # An unknown key ARN is a key the program creates (readers/keys.py reads it as set, not AWS-managed).
            value = kms.aws_managed_in(parent, name) if kind == sp.KEY else get(parent, name)
            if value is None:
                continue
            where = f"{base}.{name}" if base else name
            # A list of settings objects is judged element by element; a list of keys as a whole.
            each = [(f"{where}[{i}]", x) for i, x in enumerate(items(value))] if is_list(value) else [(where, value)]
            if kind != sp.CONTAINER:
                each = [(where, value)]
            for at, v in each:
                for message in findings(kind, name, at, v, parent, cfg):
                    report(message)


GUARDRAIL = Guardrail(
    id="GC-SEC-172",
    name="encryption-not-disabled",
    description="No resource may turn its encryption off or name an AWS-managed key where it takes a key "
    "(every type the surface inventory lists as holding data at rest).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Remove the setting that turns encryption off (a false encryption flag, an encryption mode "
    "of NONE / DISABLED / PLAINTEXT); name a customer-managed KMS key instead of an alias/aws/... key.",
    references=("CKV_AWS_27", "CKV_AWS_43", "CKV_AWS_84", "CKV_AWS_44", "SH KMS", "AWS KMS developer guide: aliases"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=TYPES,
    validate=validate,
    config={
        "requireCustomerManagedKeys": {
            "type": "boolean",
            "default": True,
            "description": "Flag key fields that name an AWS-managed key (alias/aws/...).",
        },
    },
)
