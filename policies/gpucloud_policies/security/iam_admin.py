"""GC-SEC-025 iam-no-admin-star: no Allow of Action "*" on Resource "*", no AdministratorAccess / IAMFullAccess."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, maps, plain, strings, text

POLICY_TYPES = (
    "aws:iam/policy:Policy",
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/userPolicy:UserPolicy",
    "aws:iam/groupPolicy:GroupPolicy",
)
ATTACHMENTS = (
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/userPolicyAttachment:UserPolicyAttachment",
    "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
)
ROLE = "aws:iam/role:Role"
ADMIN_POLICIES = ("AdministratorAccess", "IAMFullAccess")


def _document(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return plain(value) if isinstance(value, Mapping) else None


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def admin_statements(doc: Any) -> list[int]:
    if not isinstance(doc, dict):
        return []
    out = []
    for i, st in enumerate(_as_list(doc.get("Statement"))):
        if not isinstance(st, dict) or st.get("Effect") != "Allow":
            continue
        actions = [a for a in _as_list(st.get("Action")) if isinstance(a, str)]
        resources = [r for r in _as_list(st.get("Resource")) if isinstance(r, str)]
        if any(a in ("*", "*:*") for a in actions) and "*" in resources:
            out.append(i)
    return out


def _admin_arn(arn: str) -> bool:
    return arn.startswith("arn:") and arn.rsplit("/", 1)[-1] in ADMIN_POLICIES and ":aws:policy/" in arn


def validate(args: Any, report: Report, cfg: Config) -> None:
    fix = "Fix: grant the specific actions on the specific resources the workload needs."
    rt, props = args.resource_type, args.props
    if rt in POLICY_TYPES:
        for i in admin_statements(_document(get(props, "policy"))):
            report(f"policy Statement[{i}] allows Action '*' on Resource '*' (full admin). {fix}")
    elif rt in ATTACHMENTS:
        arn = text(get(props, "policyArn"))
        if _admin_arn(arn):
            report(f"attaches {arn.rsplit('/', 1)[-1]}. {fix}")
    elif rt == ROLE:
        for arn in strings(get(props, "managedPolicyArns")):
            if _admin_arn(arn):
                report(f"managedPolicyArns includes {arn.rsplit('/', 1)[-1]}. {fix}")
        for p in maps(get(props, "inlinePolicies")):
            for i in admin_statements(_document(get(p, "policy"))):
                report(f"inline policy '{text(get(p, 'name'))}' Statement[{i}] allows '*' on '*'. {fix}")


GUARDRAIL = Guardrail(
    id="GC-SEC-025",
    name="iam-no-admin-star",
    description="IAM policies must not allow Action '*' on Resource '*' or attach AdministratorAccess / IAMFullAccess.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Scope actions and resources; use AWS managed policies for EKS nodes (AmazonEKSWorkerNodePolicy, "
    "AmazonEC2ContainerRegistryReadOnly) and Pod Identity roles for workloads.",
    references=("CKV_AWS_1", "CKV_AWS_49", "CKV_AWS_62", "CKV_AWS_63", "CKV_AWS_355", "CKV2_AWS_40", "AWS-0057"),
    kind="resource",
    resource_types=frozenset({*POLICY_TYPES, *ATTACHMENTS, ROLE}),
    validate=validate,
)
