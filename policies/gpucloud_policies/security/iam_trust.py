"""GC-SEC-026 iam-no-public-trust: no role any AWS principal in any account can assume.

A trust policy Allow with Principal ``"*"`` or ``{"AWS": "*"}`` (or a NotPrincipal Allow) and no Condition
lets anyone with an AWS account call sts:AssumeRole on the role. A condition (``aws:PrincipalOrgID``,
``sts:ExternalId``, an OIDC ``sub``) is what scopes such a statement, so only unconditioned ones are reported.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get
from .iam import document, public_trust

ROLE = "aws:iam/role:Role"


def validate(args: Any, report: Report, cfg: Config) -> None:
    found = public_trust(document(get(args.props, "assumeRolePolicy")))
    if found:
        report(
            f"assumeRolePolicy Statement{found} trusts every AWS principal ('*') without a Condition: anyone with "
            "an AWS account can assume this role. Fix: name the trusted account, role or service principal, or "
            "add a Condition such as aws:PrincipalOrgID or sts:ExternalId."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-026",
    name="iam-no-public-trust",
    description="IAM role trust policies must not let any AWS principal ('*') assume the role without a condition.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Trust specific principals (account root ARN, role ARN, service principal, OIDC provider) "
    "or add a Condition (aws:PrincipalOrgID, sts:ExternalId) to the statement.",
    references=("CKV_AWS_60",),
    kind="resource",
    surfaces=frozenset({"principal"}),
    resource_types=frozenset({ROLE}),
    validate=validate,
)
