"""GC-SEC-010 lt-ebs-encrypted: every EBS volume is encrypted, with a KMS key where required.

The volumes of each launch path come from the fleet layer (gpucloud.fleet.settings), Karpenter EC2NodeClass v1
and v1beta1 included: an EC2NodeClass without blockDeviceMappings gets Karpenter's default volume, encrypted
but with no key of its own.

pulumi-aws passes launch-template ``ebs.encrypted`` as a *string*: "false" is truthy in Python, so values are
normalised (pulumi/pulumi-aws#2257).
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T
from gpucloud.fleet.settings import KARPENTER_VOLUME_DEFAULT, Volume, node_settings

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, plain, present, truthy, unknown
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_FLEET, SPOT_REQUEST
from ..templates import inherits

VOLUME = T.EBS_VOLUME
NODE_CLASSES = frozenset(T.EC2_NODE_CLASSES)


def _volumes(rt: str, props: Any) -> list[Volume]:
    """The volumes a launch path creates (gpucloud.fleet.settings); an aws.ebs.Volume is its own."""
    if rt == VOLUME:
        raw = get(props, "encrypted")
        return [Volume("", raw if isinstance(raw, bool) else None, raw, present(props, "kmsKeyId"))]
    s = node_settings(rt, plain(props))
    volumes = list(s.volumes) if s is not None else []
    if rt in (INSTANCE, SPOT_REQUEST) and inherits(props, "rootBlockDevice"):
        # The root volume of an instance launched from this program's template is the template's to encrypt.
        volumes = [v for v in volumes if v.path != "rootBlockDevice"]
    return volumes


def validate(args: Any, report: Report, cfg: Config) -> None:
    need_key = bool(cfg["requireKmsKey"])
    for v in _volumes(args.resource_type, args.props):
        label = f"{v.path}." if v.path else ""
        if v.unknown:
            raise unknown(f"{label}encrypted")
        if v.default and v.encrypted is None:
            raise unknown(
                v.path,
                f"{v.path} is unset and the EC2NodeClass's AMI family has no documented default mapping, so "
                "whether its volumes are encrypted depends on the AMI",
            )
        if v.default == KARPENTER_VOLUME_DEFAULT:
            if need_key:
                report(
                    f"{v.path} is unset: Karpenter's default volume is encrypted with the account's default EBS "
                    "key, not the platform's. Fix: set blockDeviceMappings with ebs.encrypted true and kmsKeyID."
                )
            continue
        if not truthy(v.encrypted if v.encrypted is not None else v.encrypted_raw):
            shown = "unset" if v.encrypted_raw is None else repr(v.encrypted_raw)
            report(
                f"{label}encrypted is {shown}: the volume is stored unencrypted. Fix: set encrypted='true' "
                "(launch templates take a string) and kms_key_id."
            )
        elif need_key and args.resource_type == LAUNCH_CONFIG:
            report(
                f"{label}kmsKeyId cannot be set on a launch configuration, so the volume uses the AWS-managed "
                "key. Fix: move to a launch template with kms_key_id."
            )
        elif need_key and not v.kms_key:
            key = "kmsKeyID" if args.resource_type in NODE_CLASSES else "kmsKeyId"
            report(
                f"{label}{key} is not set: the volume uses the AWS-managed key. Fix: set kms_key_id to the "
                "platform's KMS key."
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-010",
    name="lt-ebs-encrypted",
    description="EBS volumes (launch templates, instances, EC2NodeClasses, volumes) must be encrypted with a KMS key.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set encrypted 'true' and kmsKeyId on every block device mapping; keep "
    "aws.ebs.EncryptionByDefault on in each account as a backstop.",
    references=(
        "SH EC2.181",
        "SH EC2.3",
        "SH EC2.7",
        "CT.EC2.PR.7",
        "CKV_AWS_8",
        "CKV_AWS_106",
        "AWS-0008",
    ),
    kind="resource",
    surfaces=frozenset({"data"}),
    resource_types=frozenset(
        {LAUNCH_TEMPLATE, INSTANCE, VOLUME, SPOT_REQUEST, LAUNCH_CONFIG, SPOT_FLEET, *NODE_CLASSES}
    ),
    validate=validate,
    config={
        "requireKmsKey": {"type": "boolean", "default": True, "description": "Require kmsKeyId (a CMK)."},
    },
)
