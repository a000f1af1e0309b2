"""GC-SEC-025 iam-no-admin-star: no identity policy grants every action, or every action of a privileged service,
on every resource, however written.

Documents are evaluated with the statement evaluator in iam.py (Action/NotAction, Resource/NotResource,
wildcards, explicit Deny), wherever the surface inventory (gpucloud.surface) finds an IAM grant on an AWS type, at
the inventory's own paths (readers/paths.py): a policy document (``policy``, ``policyDocument``,
``inlinePolicy``, ``inlinePolicies.policy``: iam.Policy / RolePolicy / UserPolicy / GroupPolicy, a Role's inline
policies, SSO permission-set inline policies, IoT policies), AWS managed policies attached by ARN
(``policyArn(s)``, ``managedPolicyArn(s)``: every ``*PolicyAttachment``, ``Role.managedPolicyArns``, SSO
attachments, QuickSight IAM policy assignments, budget actions), whose documents iam.py knows, and the IAM
resources an infrastructure template defines (a CloudFormation ``templateBody``, a Cloud Control
``desiredState``: readers/templates.py). A permissions boundary or a session policy only caps what other
policies grant, so it is never a grant (IAM User Guide, "Permissions boundaries for IAM entities", "Session
policies"); an EKS access policy grants Kubernetes permissions, judged with RBAC (k8s-rbac-wildcard-admin).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from gpucloud import surface

from .. import coverage
from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, has, strings, text, unknown
from ..readers import paths, templates
from .iam import ANY_SERVICE, document, grants_service, managed_document, managed_name

DOCUMENT_LEAVES = frozenset({"policy", "policyDocument", "inlinePolicy"})
ARN_LEAVES = frozenset({"policyArn", "policyArns", "managedPolicyArn", "managedPolicyArns"})
TEMPLATE_LEAVES = frozenset({"templateBody", "desiredState"})
BOUNDARY = "permissionsBoundary"
ROLE = "aws:iam/role:Role"


def _steps(path: str) -> list[str]:
    return path.split(".")


@functools.cache
def grants() -> dict[str, tuple[str, ...]]:
    """AWS type -> its IAM grant paths, for every inventory type whose every iam path this guardrail reads (a
    document, an ARN or a template; a boundary path grants nothing), the scope table not putting it out of scope."""
    table = coverage.scope()
    out: dict[str, tuple[str, ...]] = {}
    for token, found in surface.types().items():
        carried = found.get("iam", [])
        if not token.startswith("aws:") or token.startswith("aws:eks/") or not carried:
            continue
        if table.get(token, {}).get("iam", "").startswith("out of scope"):
            continue
        read = [p for p in carried if BOUNDARY not in _steps(p)]
        if read and all(_steps(p)[-1] in DOCUMENT_LEAVES | ARN_LEAVES | TEMPLATE_LEAVES for p in read):
            out[token] = tuple(read)
    return out


def _values(props: Any, path: str) -> Iterator[tuple[str, Any]]:
    for where, value in paths.values(props, path):
        if value is paths.UNKNOWN:
            raise unknown(where, f"{where} is computed, so what it grants is unknown at preview")
        yield where, value


def _documents(rt: str, props: Any) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """(where, document) for every policy document the resource carries, attaches or defines."""
    for path in grants().get(rt, ()):
        leaf = _steps(path)[-1]
        if leaf in DOCUMENT_LEAVES and "." in path:
            # A document inside a block (a Role's inlinePolicies): named by the block's ``name``.
            for where, block in _values(props, path.rsplit(".", 1)[0]):
                if has(block, leaf):
                    label = text(get(block, "name"))
                    yield f"{where} '{label}'" if label else f"{where}.{leaf}", document(get(block, leaf))
            continue
        for where, value in _values(props, path):
            if leaf in DOCUMENT_LEAVES:
                yield where, document(value)
            elif leaf in ARN_LEAVES:
                for arn in strings(value):
                    yield f"{where} ({managed_name(arn) or arn})", managed_document(arn)
            elif leaf == "templateBody":
                for inner, doc, ref in templates.template_documents(value):
                    yield from _template_entry(f"{where} {inner}", doc, ref)
            else:
                kind = text(get(props, "typeName"))
                for inner, doc, ref in templates.documents(kind, templates.load(value), kind):
                    yield from _template_entry(f"{where} {inner}", doc, ref)


def _template_entry(where: str, doc: Any, arn: str | None) -> Iterator[tuple[str, Any]]:
    if templates.intrinsic(doc):
        raise unknown(where, f"{where} is written with an intrinsic function, resolved only when the stack deploys")
    if arn is not None:
        yield f"{where} ({managed_name(arn) or arn})", managed_document(arn)
    else:
        yield where, doc


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
    "ec2, s3, kms, organizations), on every resource, inline, through AWS managed policies or in a template, on "
    "every type the surface inventory lists with an IAM grant.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Scope actions and resources; use AWS managed policies for EKS nodes (AmazonEKSWorkerNodePolicy, "
    "AmazonEC2ContainerRegistryReadOnly) and Pod Identity roles for workloads.",
    references=("CKV_AWS_1", "CKV_AWS_49", "CKV_AWS_62", "CKV_AWS_63", "CKV_AWS_355", "CKV2_AWS_40", "AWS-0057"),
    kind="resource",
    surfaces=frozenset({"iam"}),
    resource_types=frozenset(grants()),
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
