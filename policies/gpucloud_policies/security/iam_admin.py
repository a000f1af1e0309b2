"""GC-SEC-025 iam-no-admin-star: no identity policy grants every action, or every action of a privileged service,
on every resource, however written.

Documents are evaluated with the statement evaluator in iam.py (Action/NotAction, Resource/NotResource,
wildcards, explicit Deny), wherever they are written: ``iam.Policy`` / ``RolePolicy`` / ``UserPolicy`` /
``GroupPolicy`` documents, a Role's ``inlinePolicies``, SSO permission-set inline policies, and the AWS managed
policies attached by ARN (``*PolicyAttachment``, ``*PolicyAttachmentsExclusive``, ``Role.managedPolicyArns``,
SSO ``ManagedPolicyAttachment``), whose documents iam.py knows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, maps, strings, text
from .iam import ANY_SERVICE, document, grants_service, managed_document, managed_name

POLICY_TYPES = {
    "aws:iam/policy:Policy": "policy",
    "aws:iam/rolePolicy:RolePolicy": "policy",
    "aws:iam/userPolicy:UserPolicy": "policy",
    "aws:iam/groupPolicy:GroupPolicy": "policy",
    "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy": "inlinePolicy",
}
ATTACHMENTS = {
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "policyArn",
    "aws:iam/userPolicyAttachment:UserPolicyAttachment": "policyArn",
    "aws:iam/groupPolicyAttachment:GroupPolicyAttachment": "policyArn",
    "aws:iam/policyAttachment:PolicyAttachment": "policyArn",
    "aws:ssoadmin/managedPolicyAttachment:ManagedPolicyAttachment": "managedPolicyArn",
    "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive": "policyArns",
    "aws:iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive": "policyArns",
    "aws:iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive": "policyArns",
    "aws:ssoadmin/managedPolicyAttachmentsExclusive:ManagedPolicyAttachmentsExclusive": "managedPolicyArns",
}
ROLE = "aws:iam/role:Role"


def _documents(rt: str, props: Any) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """(where, document) for every policy document the resource carries or attaches."""
    if rt in POLICY_TYPES:
        key = POLICY_TYPES[rt]
        yield key, document(get(props, key))
    elif rt in ATTACHMENTS:
        key = ATTACHMENTS[rt]
        for i, arn in enumerate(strings(get(props, key))):
            where = f"{key}[{i}]" if key.endswith("s") else key
            yield f"{where} ({managed_name(arn) or arn})", managed_document(arn)
    elif rt == ROLE:
        for i, arn in enumerate(strings(get(props, "managedPolicyArns"))):
            yield f"managedPolicyArns[{i}] ({managed_name(arn) or arn})", managed_document(arn)
        for i, p in enumerate(maps(get(props, "inlinePolicies"))):
            yield f"inlinePolicies[{i}] '{text(get(p, 'name'))}'", document(get(p, "policy"))


def validate(args: Any, report: Report, cfg: Config) -> None:
    fix = "Fix: grant the specific actions on the specific resources the workload needs."
    services = [str(s) for s in cfg["privilegedServices"]]
    for where, doc in _documents(args.resource_type, args.props):
        if doc is None:
            continue
        admin = grants_service(doc, ANY_SERVICE)
        if admin:
            report(
                f"{where} Statement{admin} allows every action on every resource (full admin, whether by "
                f"Action '*', NotAction or NotResource). {fix}"
            )
            continue
        broad = {s: found for s in services if (found := grants_service(doc, s))}
        if broad:
            shown = ", ".join(f"{s}:*" for s in broad)
            statements = sorted({i for found in broad.values() for i in found})
            report(f"{where} Statement{statements} allows {shown} on every resource (admin of the service). {fix}")


GUARDRAIL = Guardrail(
    id="GC-SEC-025",
    name="iam-no-admin-star",
    description="IAM policies must not grant every action, or every action of a privileged service (iam, sts, "
    "ec2, s3, kms, organizations), on every resource, inline or through AWS managed policies.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Scope actions and resources; use AWS managed policies for EKS nodes (AmazonEKSWorkerNodePolicy, "
    "AmazonEC2ContainerRegistryReadOnly) and Pod Identity roles for workloads.",
    references=("CKV_AWS_1", "CKV_AWS_49", "CKV_AWS_62", "CKV_AWS_63", "CKV_AWS_355", "CKV2_AWS_40", "AWS-0057"),
    kind="resource",
    surfaces=frozenset({"iam"}),
    resource_types=frozenset({*POLICY_TYPES, *ATTACHMENTS, ROLE}),
    validate=validate,
    config={
        "privilegedServices": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["iam", "sts", "ec2", "s3", "kms", "organizations"],
            "description": "Services whose every action on every resource counts as admin (service prefixes).",
        },
    },
)
