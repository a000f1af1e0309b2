"""GC-SEC-012 lt-no-secrets-in-userdata: user data holds no credentials (it is readable from IMDS and the API)."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, text
from ..capacity import INSTANCE, LAUNCH_TEMPLATE

PATTERNS = (
    ("an AWS access key ID", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("an AWS secret access key", re.compile(r"aws_secret_access_key\s*[=:]\s*\S{20,}", re.IGNORECASE)),
    ("a private key", re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----")),
    ("a GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
)


def _decode(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return value


def validate(args: Any, report: Report, cfg: Config) -> None:
    sources = []
    if args.resource_type == LAUNCH_TEMPLATE:
        sources.append(("userData", _decode(text(get(args.props, "userData")))))
    else:
        sources.append(("userData", text(get(args.props, "userData"))))
        sources.append(("userDataBase64", _decode(text(get(args.props, "userDataBase64")))))
    for where, body in sources:
        for what, pattern in PATTERNS:
            if pattern.search(body):
                report(
                    f"{where} contains {what}; user data is readable by anyone who can describe the instance. "
                    "Fix: read the secret at boot from Secrets Manager / SSM Parameter Store with the node role."
                )


GUARDRAIL = Guardrail(
    id="GC-SEC-012",
    name="lt-no-secrets-in-userdata",
    description="User data must not contain credentials or private keys.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Remove the secret from user data, rotate it, and fetch it at boot from Secrets Manager or "
    "SSM Parameter Store.",
    references=("CKV_AWS_46", "AWS-0029", "AWS-0129", "AWS-0122"),
    kind="resource",
    surfaces=frozenset({"secrets"}),
    resource_types=frozenset({LAUNCH_TEMPLATE, INSTANCE}),
    validate=validate,
)
