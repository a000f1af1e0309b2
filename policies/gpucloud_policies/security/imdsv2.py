"""GC-SEC-008 lt-imdsv2: instances require IMDSv2 session tokens (or have IMDS off).

At level ``remediate`` the policy sets ``metadataOptions.httpTokens = "required"``.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, count, get, plain, text
from ..capacity import INSTANCE, LAUNCH_CONFIG, LAUNCH_TEMPLATE, SPOT_FLEET, SPOT_REQUEST
from ..templates import inherits


def _compliant(props: Any) -> bool:
    md = get(props, "metadataOptions")
    return text(get(md, "httpTokens")) == "required" or text(get(md, "httpEndpoint")) == "disabled"


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.resource_type == SPOT_FLEET:
        # Spot Fleet launch specifications have no metadata options: their instances take IMDSv1 defaults.
        if count(get(args.props, "launchSpecifications")):
            report(
                "launchSpecifications cannot require IMDSv2 (they have no metadata options), so the instances "
                "accept IMDSv1. Fix: use launchTemplateConfigs with a template that sets httpTokens 'required'."
            )
        return
    if args.resource_type != LAUNCH_TEMPLATE and inherits(args.props, "metadataOptions"):
        return
    if not _compliant(args.props):
        tokens = text(get(args.props, "metadataOptions", "httpTokens")) or "unset (defaults to optional)"
        report(
            f"metadataOptions.httpTokens is {tokens}: IMDSv1 lets any SSRF read the node role's credentials. "
            "Fix: set metadata_options={'http_tokens': 'required', 'http_put_response_hop_limit': 1}."
        )


def remediate(args: Any, cfg: Config) -> dict[str, Any] | None:
    if args.resource_type == SPOT_FLEET or _compliant(args.props):
        return None
    if args.resource_type != LAUNCH_TEMPLATE and inherits(args.props, "metadataOptions"):
        return None
    props = plain(args.props)
    md = props.get("metadataOptions") if isinstance(props.get("metadataOptions"), dict) else {}
    props["metadataOptions"] = {**md, "httpTokens": "required", "httpEndpoint": "enabled"}
    return props


GUARDRAIL = Guardrail(
    id="GC-SEC-008",
    name="lt-imdsv2",
    description="Launch templates and instances must require IMDSv2 (httpTokens required).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set metadataOptions.httpTokens to 'required' (the pack can do it at level remediate).",
    references=("CKV_AWS_79", "AWS-0130", "SH EC2.8", "SH EC2.170", "CT.EC2.PR.1"),
    kind="resource",
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE, SPOT_REQUEST, LAUNCH_CONFIG, SPOT_FLEET}),
    validate=validate,
    remediate=remediate,
)
