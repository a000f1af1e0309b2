"""GC-SEC-158 k8s-rbac-wildcard-admin: who is made a cluster administrator (advisory).

Cluster-admin power reaches a workload or a person three ways, each read at the surface inventory's paths:

- a Role or ClusterRole with a rule of verbs ``*`` on resources ``*`` in apiGroups ``*`` (the rule of the
  ``cluster-admin`` ClusterRole, "super-user access to perform any action on any resource": Kubernetes RBAC
  reference, "User-facing roles"); a ClusterRole's ``aggregationRule`` only gathers other ClusterRoles' rules,
  judged on those roles;
- a RoleBinding or ClusterRoleBinding whose ``roleRef`` is ``cluster-admin``, to any subject but the
  ``system:masters`` group Kubernetes binds it to itself;
- an EKS access policy association of ``AmazonEKSClusterAdminPolicy`` (EKS user guide, "Review access policy
  permissions": the equivalent of cluster-admin) at cluster scope.

Whether an administrator is meant is the team's decision (platforms grant their own admin role this way), so a
finding is a warning, never blocking by default; unauthenticated bindings are GC-SEC-157's error.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, text
from ..k8s import objects
from ..readers import rbac

EKS_ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
EKS_CLUSTER_ADMIN = "AmazonEKSClusterAdminPolicy"
MASTERS = "system:masters"
RBAC_PATHS = frozenset({"rules", "aggregationRule", "roleRef", "subjects"})


def _eks(r: Any, report: StackReport) -> None:
    arn = text(get(r.props, "policyArn"))
    if arn.rsplit("/", 1)[-1] == EKS_CLUSTER_ADMIN and text(get(r.props, "accessScope", "type")) == "cluster":
        who = text(get(r.props, "principalArn")) or "its principal"
        report(r.urn, f"policyArn {EKS_CLUSTER_ADMIN} at cluster scope makes {who} a cluster administrator. {FIX}")


FIX = "Fix: grant the verbs and resources the subject needs (a namespaced Role, or AmazonEKSEditPolicy / ViewPolicy)."


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    for r in args.resources:
        if r.resource_type == EKS_ASSOCIATION:
            with deciding(r):
                _eks(r, report)
    for obj in objects(args.resources):
        kind = rbac.base_kind(obj.kind)
        if kind not in rbac.ROLE_KINDS | rbac.BINDING_KINDS:
            continue
        with deciding(obj.urn):
            if kind in rbac.ROLE_KINDS:
                found = rbac.wildcard_rules(obj.body)
                if found:
                    report(obj.urn, f"{obj.ref} rules{found} grant every verb on every resource (cluster-admin). {FIX}")
                continue
            _, name = rbac.role_ref(obj.body)
            subjects = [s for s in rbac.subjects(obj.body) if not (s.kind == "Group" and s.name == MASTERS)]
            if name == rbac.CLUSTER_ADMIN and subjects:
                who = ", ".join(f"{s.kind} {s.name}" for s in subjects)
                report(obj.urn, f"{obj.ref} binds cluster-admin to {who}. {FIX}")


GUARDRAIL = Guardrail(
    id="GC-SEC-158",
    name="k8s-rbac-wildcard-admin",
    description="Roles granting every verb on every resource, bindings of cluster-admin and EKS cluster-admin "
    "access policies are reported (a warning: whether an administrator is meant is the team's decision).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Grant the verbs and resources each subject needs; keep cluster-admin for break-glass roles.",
    references=("CIS Kubernetes Benchmark 5.1.1, 5.1.3", "Kubernetes RBAC reference: User-facing roles"),
    kind="stack",
    surfaces=frozenset({"iam"}),
    reads=frozenset({EKS_ASSOCIATION, *rbac.rbac_types(RBAC_PATHS)}),
    validate=validate,
)
