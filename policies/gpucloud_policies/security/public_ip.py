"""GC-SEC-011 lt-no-public-ip: GPU nodes get no public IP addresses (string booleans normalised).

The public-IP flags of each launch path come from the fleet layer (gpucloud.fleet.settings): template network
interfaces, instance / spot request / launch configuration flags, Spot Fleet launch specifications and Karpenter
EC2NodeClass ``spec.associatePublicIPAddress`` (v1 and v1beta1). Unset leaves it to the subnet's
mapPublicIpOnLaunch, judged on the subnet.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T
from gpucloud.fleet.settings import node_settings

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, plain, unknown
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_FLEET, SPOT_REQUEST
from ..templates import inherits

NODE_CLASSES = frozenset(T.EC2_NODE_CLASSES)


def _fix(rt: str, path: str) -> str:
    if rt == LAUNCH_TEMPLATE:
        return (
            f"{path} is true: nodes get a public IP. Fix: set it to 'false' and use private subnets with a NAT "
            "gateway or VPC endpoints."
        )
    if rt == SPOT_FLEET:
        return f"{path} is true. Fix: use private subnets."
    if rt in NODE_CLASSES:
        return f"{path} is true: nodes get a public IP. Fix: set it to false and select private subnets."
    return f"{path} is true. Fix: launch in a private subnet without a public IP."


def validate(args: Any, report: Report, cfg: Config) -> None:
    rt = args.resource_type
    if rt in (INSTANCE, SPOT_REQUEST) and inherits(args.props, "associatePublicIpAddress"):
        return
    s = node_settings(rt, plain(args.props))
    if s is None:
        return
    public = [path for path, on in s.public_ips if on]
    for path in public:
        report(_fix(rt, path))
    if not public and "public_ip" in s.unknown:
        raise unknown(s.unknown["public_ip"])


GUARDRAIL = Guardrail(
    id="GC-SEC-011",
    name="lt-no-public-ip",
    description="Launch templates, instances and Karpenter EC2NodeClasses must not assign public IP addresses.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set associatePublicIpAddress 'false' on every network interface; place nodes in private "
    "subnets (mapPublicIpOnLaunch false).",
    references=("CKV_AWS_88", "AWS-0009", "AWS-0164", "SH EC2.25", "SH EC2.9", "SH EC2.15", "CT.EC2.PR.8"),
    kind="resource",
    surfaces=frozenset({"network"}),
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG, SPOT_FLEET, *NODE_CLASSES}),
    validate=validate,
)
