"""GC-SEC-011 lt-no-public-ip: GPU nodes get no public IP addresses (string booleans normalised)."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, maps, truthy
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_FLEET, SPOT_REQUEST
from ..templates import inherits


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.resource_type == SPOT_FLEET:
        for i, ls in enumerate(maps(get(args.props, "launchSpecifications"))):
            if truthy(get(ls, "associatePublicIpAddress")):
                report(f"launchSpecifications[{i}].associatePublicIpAddress is true. Fix: use private subnets.")
        return
    if args.resource_type in (INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG):
        if args.resource_type != LAUNCH_CONFIG and inherits(args.props, "associatePublicIpAddress"):
            return
        if truthy(get(args.props, "associatePublicIpAddress")):
            report("associatePublicIpAddress is true. Fix: launch in a private subnet without a public IP.")
        return
    for i, ni in enumerate(maps(get(args.props, "networkInterfaces"))):
        if truthy(get(ni, "associatePublicIpAddress")):
            report(
                f"networkInterfaces[{i}].associatePublicIpAddress is true: nodes get a public IP. Fix: set it "
                "to 'false' and use private subnets with a NAT gateway or VPC endpoints."
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-011",
    name="lt-no-public-ip",
    description="Launch templates and instances must not assign public IP addresses.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set associatePublicIpAddress 'false' on every network interface; place nodes in private "
    "subnets (mapPublicIpOnLaunch false).",
    references=("CKV_AWS_88", "AWS-0009", "AWS-0164", "SH EC2.25", "SH EC2.9", "SH EC2.15", "CT.EC2.PR.8"),
    kind="resource",
    surfaces=frozenset({"network"}),
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG, SPOT_FLEET}),
    validate=validate,
)
