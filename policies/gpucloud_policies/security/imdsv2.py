"""GC-SEC-008 lt-imdsv2: instances require IMDSv2 session tokens (or have IMDS off), on every launch path.

The settings come from the fleet layer's one reading of each path (gpucloud.fleet.settings): launch templates,
launch configurations, instances, spot requests, Spot Fleet launch specifications and Karpenter EC2NodeClass v1
and v1beta1, whose documented default (httpTokens required) makes an unset field compliant there, as nodeadm
user data does elsewhere (only AL2023 AMIs run nodeadm, and they require IMDSv2 by default). An unset field on a
path whose AMI is computed at preview is undecided: the AMI's ImdsSupport decides the default.

At level ``remediate`` the policy sets ``metadataOptions.httpTokens = "required"``.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T
from gpucloud.fleet.settings import NodeSettings, node_settings

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, count, get, plain, unknown
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_FLEET, SPOT_REQUEST
from ..templates import inherits

NODE_CLASSES = frozenset(T.EC2_NODE_CLASSES)
# Paths that judge their own settings; the others may inherit them from a launch template in the program.
_OWN = frozenset({LAUNCH_TEMPLATE, *NODE_CLASSES})


def _settings(args: Any) -> NodeSettings | None:
    if args.resource_type not in _OWN and inherits(args.props, "metadataOptions"):
        return None
    return node_settings(args.resource_type, plain(args.props))


def _compliant(s: NodeSettings) -> bool:
    return s.tokens == "required" or s.endpoint == "disabled"


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.resource_type == SPOT_FLEET:
        # Spot Fleet launch specifications have no metadata options: their instances take IMDSv1 defaults.
        if count(get(args.props, "launchSpecifications")):
            report(
                "launchSpecifications cannot require IMDSv2 (they have no metadata options), so the instances "
                "accept IMDSv1. Fix: use launchTemplateConfigs with a template that sets httpTokens 'required'."
            )
        return
    s = _settings(args)
    if s is None or _compliant(s):
        return
    for field in ("tokens", "endpoint"):
        if field in s.unknown:
            raise unknown(s.unknown[field])
    if s.tokens is None and s.image_unknown:
        # Unset, EC2 takes the AMI's default: required for an AMI registered with ImdsSupport v2.0 (every AL2023
        # AMI), optional otherwise. An AMI computed at preview (an SSM or get_ami lookup) leaves that open.
        raise unknown(
            s.image_unknown,
            f"metadataOptions.httpTokens is unset, so the AMI's default decides (required on AL2023 and other "
            f"ImdsSupport v2.0 AMIs, optional otherwise), and {s.image_unknown} is computed at preview",
        )
    tokens = s.tokens or "unset (defaults to optional)"
    report(
        f"{s.metadata_path}.httpTokens is {tokens}: IMDSv1 lets any SSRF read the node role's credentials. "
        "Fix: set metadata_options={'http_tokens': 'required', 'http_put_response_hop_limit': 1}."
    )


def remediate(args: Any, cfg: Config) -> dict[str, Any] | None:
    if args.resource_type == SPOT_FLEET:
        return None
    s = _settings(args)
    if s is None or _compliant(s) or s.unknown.keys() & {"tokens", "endpoint"}:
        return None
    props = plain(args.props)
    holder = props.setdefault("spec", {}) if args.resource_type in NODE_CLASSES else props
    md = holder.get("metadataOptions") if isinstance(holder.get("metadataOptions"), dict) else {}
    holder["metadataOptions"] = {**md, "httpTokens": "required", "httpEndpoint": "enabled"}
    return props


GUARDRAIL = Guardrail(
    id="GC-SEC-008",
    name="lt-imdsv2",
    description="Launch templates, instances and Karpenter EC2NodeClasses must require IMDSv2 (httpTokens required).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set metadataOptions.httpTokens to 'required' (the pack can do it at level remediate).",
    references=("CKV_AWS_79", "AWS-0130", "SH EC2.8", "SH EC2.170", "CT.EC2.PR.1"),
    kind="resource",
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG, SPOT_FLEET, *NODE_CLASSES}),
    validate=validate,
    remediate=remediate,
)
