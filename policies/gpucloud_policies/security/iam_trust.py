"""GC-SEC-026 iam-no-public-trust: no role any AWS principal in any account can assume.

A trust policy Allow with Principal ``"*"`` or ``{"AWS": "*"}`` (or a NotPrincipal Allow) lets anyone with an
AWS account call sts:AssumeRole on the role unless a condition restricts *who* (``aws:PrincipalOrgID``,
``aws:SourceAccount``, ``sts:ExternalId``, ...); one that restricts nothing about the caller
(``aws:SecureTransport``, ``aws:CurrentTime``) leaves it public. A federated web-identity trust without a
``<provider>:sub`` condition lets every identity of the provider assume it (every service account of an EKS
cluster). The verdict is the principal reader's (readers/principals.py), shared with every resource policy.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get
from ..readers import principals

ROLE = "aws:iam/role:Role"


def validate(args: Any, report: Report, cfg: Config) -> None:
    for f in principals.public_statements(principals.document(get(args.props, "assumeRolePolicy"))):
        report(
            f"assumeRolePolicy Statement[{f.index}] trusts {f.why}: anyone it admits can assume this role. Fix: "
            "name the trusted account, role or service principal, or add a Condition that restricts who "
            "(aws:PrincipalOrgID, aws:SourceAccount, sts:ExternalId; for an OIDC provider, its ':sub' claim)."
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-026",
    name="iam-no-public-trust",
    description="IAM role trust policies must not let any AWS principal ('*') assume the role unless a condition "
    "restricts who, nor trust an OIDC provider without a 'sub' condition.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Trust specific principals (account root ARN, role ARN, service principal, OIDC provider "
    "with a sub condition) or add a Condition that restricts who (aws:PrincipalOrgID, aws:SourceAccount, "
    "sts:ExternalId).",
    references=("CKV_AWS_60", "CKV_AWS_358"),
    kind="resource",
    surfaces=frozenset({"principal"}),
    resource_types=frozenset({ROLE}),
    validate=validate,
)
