"""GC-SEC-142 rds-encrypted-cmk: RDS instances and Aurora/RDS clusters are encrypted with a customer-managed key.

Fields from the pulumi-aws 7.51 input types ``aws.rds.InstanceArgs`` and ``aws.rds.ClusterArgs``:
``storage_encrypted`` (default false) and ``kms_key_id``. A read replica (``replicate_source_db``) or a cluster
replica (``replication_source_identifier``) inherits encryption from its source and may not set
``storage_encrypted`` itself; it still needs ``kms_key_id`` when it lives in another region, so only the key is
required of it. A restore from a snapshot (``snapshot_identifier``) takes the snapshot's encryption unless
``storage_encrypted`` and ``kms_key_id`` are given, so it is judged like any other.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, present
from .encryption import AtRest

INSTANCE = "aws:rds/instance:Instance"
CLUSTER = "aws:rds/cluster:Cluster"
REPLICA_OF = {INSTANCE: "replicateSourceDb", CLUSTER: "replicationSourceIdentifier"}
AT_REST = AtRest(
    flag="storageEncrypted",
    unencrypted="the database storage, its backups and snapshots are unencrypted",
    flag_fix="set storage_encrypted=True and kms_key_id",
    aws_managed="storage uses the AWS-managed aws/rds key",
    key_fix="set kms_key_id",
)


def validate(args: Any, report: Report, cfg: Config) -> None:
    replica = present(args.props, REPLICA_OF[args.resource_type])
    AT_REST.check(args.props, report, require_key=cfg["requireKmsKey"], flag_inherited=replica)


GUARDRAIL = Guardrail(
    id="GC-SEC-142",
    name="rds-encrypted-cmk",
    description="RDS instances and clusters must be encrypted with a customer-managed KMS key.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set storageEncrypted=True and kmsKeyId on aws.rds.Instance / aws.rds.Cluster (existing "
    "databases: restore an encrypted copy of a snapshot).",
    references=("CKV_AWS_16", "CKV_AWS_96", "CKV_AWS_327", "AWS-0080", "AWS-0079", "SH RDS.3"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({INSTANCE, CLUSTER}),
    validate=validate,
    config={
        "requireKmsKey": {"type": "boolean", "default": True, "description": "Require kmsKeyId (a CMK)."},
    },
)
