"""GC-SEC-018 fsx-persistent-cmk: FSx file systems (all four types) use a customer-managed KMS key.

FSx always encrypts at rest; without ``kms_key_id`` it uses the AWS-managed ``aws/fsx`` key. Field names from the
pulumi-aws 7.51 input types ``aws.fsx.LustreFileSystemArgs``, ``OntapFileSystemArgs``, ``OpenZfsFileSystemArgs``
and ``WindowsFileSystemArgs`` (all ``kms_key_id``). Lustre scratch deployments (``SCRATCH_1``/``SCRATCH_2``, the
provider's default type) cannot take a key (the Lustre input type documents kms_key_id for PERSISTENT types
only), so they are not flagged.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, present, text
from ..readers import keys

LUSTRE = T.LUSTRE
ONTAP = "aws:fsx/ontapFileSystem:OntapFileSystem"
OPENZFS = "aws:fsx/openZfsFileSystem:OpenZfsFileSystem"
WINDOWS = "aws:fsx/windowsFileSystem:WindowsFileSystem"


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.resource_type == LUSTRE:
        kind = text(get(args.props, "deploymentType"), "SCRATCH_1")
        if not kind.startswith("PERSISTENT"):
            return
        what = f"deploymentType {kind}"
    else:
        what = args.resource_type.rsplit(":", 1)[-1]
    if not present(args.props, "kmsKeyId"):
        report(
            f"{what} without kmsKeyId: data at rest uses the AWS-managed key. Fix: set kms_key_id to the "
            "platform's KMS key."
        )
    elif (alias := keys.aws_managed_in(args.props, "kmsKeyId")) is not None:
        report(
            f"{what} with kmsKeyId {alias!r}, an AWS-managed key alias (alias/aws/...), not a customer-managed "
            "key. Fix: set kms_key_id to the platform's KMS key."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-018",
    name="fsx-persistent-cmk",
    description="FSx file systems (persistent Lustre, ONTAP, OpenZFS, Windows) must be encrypted with a "
    "customer-managed KMS key.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set kmsKeyId on persistent Lustre, ONTAP, OpenZFS and Windows file systems (Lustre scratch "
    "types cannot take one and are not checked).",
    references=("CKV_AWS_190", "CKV_AWS_178", "CKV_AWS_203", "CKV_AWS_179"),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset({LUSTRE, ONTAP, OPENZFS, WINDOWS}),
    validate=validate,
)
