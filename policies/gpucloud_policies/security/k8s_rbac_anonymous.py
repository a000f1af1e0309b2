"""GC-SEC-157 k8s-rbac-no-anonymous-binding: no RoleBinding or ClusterRoleBinding grants a role to every request
without credentials.

A subject ``User system:anonymous`` or ``Group system:unauthenticated`` is anyone who can reach the API server
(readers/rbac.py); a binding of any role to it other than the one Kubernetes binds there itself
(``system:public-info-viewer``) hands that role to the internet wherever the endpoint is public. Certain, so an
error. Every binding type of the surface inventory is read at its ``roleRef`` and ``subjects`` (registered,
in a List, patched, or rendered by a chart).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding
from ..k8s import objects
from ..readers import rbac


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    for obj in objects(args.resources):
        if rbac.base_kind(obj.kind) not in rbac.BINDING_KINDS:
            continue
        with deciding(obj.urn):
            kind, name = rbac.role_ref(obj.body)
            found = rbac.anonymous(obj.body)
            if found and name != rbac.PUBLIC_INFO_ROLE:
                who = ", ".join(f"{s.kind} {s.name}" for s in found)
                report(
                    obj.urn,
                    f"{obj.ref} binds {kind or 'role'} '{name}' to {who}: every request without credentials gets "
                    "it. Fix: bind the role to the service accounts, users or groups that need it.",
                )


GUARDRAIL = Guardrail(
    id="GC-SEC-157",
    name="k8s-rbac-no-anonymous-binding",
    description="RoleBindings and ClusterRoleBindings must not grant a role to system:anonymous or "
    "system:unauthenticated (other than Kubernetes' own system:public-info-viewer).",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Bind roles to named service accounts, users or groups; never to anonymous requests.",
    references=(
        "Kubernetes authentication reference: Anonymous requests",
        "Kubernetes RBAC reference: Discovery roles",
    ),
    kind="stack",
    surfaces=frozenset({"iam"}),
    reads=rbac.rbac_types(frozenset({"roleRef", "subjects"})),
    validate=validate,
)
