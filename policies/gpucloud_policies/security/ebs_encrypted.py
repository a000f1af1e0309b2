"""GC-SEC-010 lt-ebs-encrypted: every EBS volume is encrypted, with a KMS key where required.

pulumi-aws passes launch-template ``ebs.encrypted`` as a *string*: "false" is truthy in Python, so values are
normalised (pulumi/pulumi-aws#2257).
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, maps, present, truthy
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_FLEET, SPOT_REQUEST
from ..templates import inherits

VOLUME = T.EBS_VOLUME


def _volumes(rt: str, props: Any) -> list[tuple[str, Any]]:
    if rt == LAUNCH_TEMPLATE:
        return [
            (f"blockDeviceMappings[{i}].ebs", get(m, "ebs"))
            for i, m in enumerate(maps(get(props, "blockDeviceMappings")))
            if get(m, "ebs") is not None
        ]
    if rt == SPOT_FLEET:
        vols = []
        for i, ls in enumerate(maps(get(props, "launchSpecifications"))):
            for key in ("rootBlockDevices", "ebsBlockDevices"):
                vols += [(f"launchSpecifications[{i}].{key}[{j}]", d) for j, d in enumerate(maps(get(ls, key)))]
            if not maps(get(ls, "rootBlockDevices")):
                vols.append((f"launchSpecifications[{i}].rootBlockDevices", {}))
        return vols
    if rt in (INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG):
        # The root volume of an instance launched from this program's template is the template's to encrypt.
        vols = (
            []
            if rt != LAUNCH_CONFIG and inherits(props, "rootBlockDevice")
            else [("rootBlockDevice", get(props, "rootBlockDevice", default={}))]
        )
        vols += [(f"ebsBlockDevices[{i}]", d) for i, d in enumerate(maps(get(props, "ebsBlockDevices")))]
        return vols
    return [("", props)]


def validate(args: Any, report: Report, cfg: Config) -> None:
    need_key = bool(cfg["requireKmsKey"])
    for where, ebs in _volumes(args.resource_type, args.props):
        label = f"{where}." if where else ""
        if not truthy(get(ebs, "encrypted")):
            raw = get(ebs, "encrypted")
            shown = "unset" if raw is None else repr(raw)
            report(
                f"{label}encrypted is {shown}: the volume is stored unencrypted. Fix: set encrypted='true' "
                "(launch templates take a string) and kms_key_id."
            )
        elif need_key and args.resource_type == LAUNCH_CONFIG:
            report(
                f"{label}kmsKeyId cannot be set on a launch configuration, so the volume uses the AWS-managed "
                "key. Fix: move to a launch template with kms_key_id."
            )
        elif need_key and not present(ebs, "kmsKeyId"):
            report(
                f"{label}kmsKeyId is not set: the volume uses the AWS-managed key. Fix: set kms_key_id to the "
                "platform's KMS key."
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-010",
    name="lt-ebs-encrypted",
    description="EBS volumes (launch templates, instances, volumes) must be encrypted with a KMS key.",
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
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE, VOLUME, SPOT_REQUEST, LAUNCH_CONFIG, SPOT_FLEET}),
    validate=validate,
    config={
        "requireKmsKey": {"type": "boolean", "default": True, "description": "Require kmsKeyId (a CMK)."},
    },
)
