"""Cross-resource invariants the scheduling of nodes depends on.

- Every customer-managed KMS key a node launches with is usable by the principal that launches it: Karpenter's
  controller role for EC2NodeClass blockDeviceMappings, the EC2 Auto Scaling service-linked role for launch
  templates of managed node groups and self-managed ASGs. EC2 needs kms:CreateGrant, kms:Decrypt, kms:DescribeKey,
  kms:GenerateDataKeyWithoutPlaintext and kms:ReEncrypt* on the key for the launching principal, through the key
  policy (directly, or by delegating to IAM with the account principal plus an IAM policy of the role) or a grant;
  otherwise the instance terminates right after launch (Client.InternalError).
- cluster-autoscaler's minor version equals the cluster's Kubernetes minor (its README's compatibility rule).
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import VENDOR_CHARTS, containers, image_of, image_tag, objects, releases
from gpucloud.conformance.node_agents import CLUSTER_AUTOSCALER, KARPENTER, collect_agents
from gpucloud.conformance.nodes import ASG, LAUNCH_TEMPLATE, NODE_GROUP
from gpucloud.conformance.parts import guarded
from gpucloud.fleet import types as T
from gpucloud.plan.model import ResourceRecord, is_unknown

KMS_KEY = T.KMS_KEY
KMS_GRANT = "aws:kms/grant:Grant"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
POLICY = "aws:iam/policy:Policy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
KMS_DOCS = (
    "AWS EC2 Auto Scaling docs 'Required AWS KMS key policy for use with encrypted volumes'; Karpenter "
    "docs (controller KMS permissions for encrypted EBS)"
)
CA_VERSION_DOCS = (
    "cluster-autoscaler README (releases: use the CA minor version matching the cluster's Kubernetes minor)"
)
SLR_NAME = "AWSServiceRoleForAutoScaling"
ACCOUNT_ROOT = "arn:aws:iam::*:root"
# What EC2 asks of the launching principal to create a volume encrypted with a customer-managed key.
REQUIRED_ACTIONS = (
    "kms:CreateGrant",
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:ReEncryptFrom",
)
_GRANT_OPS = {
    "kms:CreateGrant": "CreateGrant",
    "kms:Decrypt": "Decrypt",
    "kms:DescribeKey": "DescribeKey",
    "kms:GenerateDataKeyWithoutPlaintext": "GenerateDataKeyWithoutPlaintext",
    "kms:ReEncryptFrom": "ReEncryptFrom",
}


def _policy(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, str):
        if is_unknown(doc):
            return []
        try:
            doc = json.loads(doc)
        except ValueError:
            return []
    if not isinstance(doc, dict):
        return []
    st = doc.get("Statement") or []
    return [s for s in (st if isinstance(st, list) else [st]) if isinstance(s, dict)]


def _as_list(v: Any) -> list[str]:
    if v is None:
        return []
    return [str(x) for x in (v if isinstance(v, list) else [v])]


def _action_allowed(statements: list[dict[str, Any]], action: str, principal_match: Any = None) -> bool:
    """An Allow statement grants the action (and, for key policies, to a principal principal_match accepts);
    an explicit Deny on it wins."""
    allowed = False
    for s in statements:
        acts = _as_list(s.get("Action"))
        if not any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in acts):
            continue
        if principal_match is not None and not principal_match(s.get("Principal")):
            continue
        if s.get("Effect") == "Deny" and not s.get("Condition"):
            return False
        if s.get("Effect") == "Allow":
            allowed = True
    return allowed


def _principals(p: Any) -> list[str]:
    if p == "*":
        return ["*"]
    if isinstance(p, dict):
        return _as_list(p.get("AWS"))
    return []


class _Principal:
    """A launching principal: an IAM role of the plan (its record) or the Auto Scaling service-linked role."""

    def __init__(self, label: str, role: ResourceRecord | None = None, arn_suffix: str | None = None) -> None:
        self.label = label
        self.role = role
        self.arn_suffix = arn_suffix

    def named_in(self, arns: list[str], account_root: bool) -> bool:
        for a in arns:
            if a == "*":
                return True
            if account_root and (a.endswith(":root") or re.fullmatch(r"\d{12}", a)):
                return True
            if self.arn_suffix and a.endswith(self.arn_suffix):
                return True
            if self.role is not None:
                name = self.role.inputs.get("name")
                if isinstance(name, str) and not is_unknown(name) and a.endswith(f":role/{name}"):
                    return True
        return False


def _role_statements(ctx: ConformanceContext, role: ResourceRecord) -> tuple[list[dict[str, Any]], bool]:
    """The role's IAM policy statements, and whether some policy is only known after deploy."""
    by_urn = ctx.plan.by_urn()
    out: list[dict[str, Any]] = []
    unknown = False
    for p in role.inputs.get("inlinePolicies") or []:
        if isinstance(p, dict):
            unknown |= is_unknown(p.get("policy"))
            out += _policy(p.get("policy"))
    for r in ctx.plan.resources:
        if role.urn not in r.property_dependencies.get("role", []):
            continue
        if r.type == ROLE_POLICY:
            unknown |= is_unknown(r.inputs.get("policy"))
            out += _policy(r.inputs.get("policy"))
        elif r.type == ATTACHMENT:
            arn = str(r.inputs.get("policyArn") or "")
            in_plan = [by_urn[u] for u in r.property_dependencies.get("policyArn", []) if u in by_urn]
            for pol in in_plan:
                if pol.type == POLICY:
                    unknown |= is_unknown(pol.inputs.get("policy"))
                    out += _policy(pol.inputs.get("policy"))
            if arn.endswith((":policy/AdministratorAccess", ":policy/PowerUserAccess")):
                out.append({"Effect": "Allow", "Action": "*", "Resource": "*"})
            elif not in_plan and ":aws:policy/" not in arn:
                unknown = True  # a customer policy outside the plan
    return out, unknown


def _karpenter_roles(ctx: ConformanceContext) -> list[ResourceRecord]:
    """IAM roles bound (Pod Identity) to the service account the Karpenter controller runs as."""
    aset = collect_agents(ctx)
    accounts = {
        (a.obj.namespace, str(a.pod.pod_spec.get("serviceAccountName") or "default")) for a in aset.of(KARPENTER)
    }
    for r in releases(ctx, "karpenter"):
        values = r.inputs.get("values") or {}
        sa = (values.get("serviceAccount") or {}).get("name") or "karpenter"
        ns = r.inputs.get("namespace") or "default"
        accounts.add((str(ns), str(sa)))
    by_urn = ctx.plan.by_urn()
    roles = []
    for r in ctx.plan.of_type(POD_IDENTITY):
        if (str(r.inputs.get("namespace")), str(r.inputs.get("serviceAccount"))) in accounts:
            roles += [
                by_urn[u] for u in r.property_dependencies.get("roleArn", []) if u in by_urn and by_urn[u].type == ROLE
            ]
    return roles


def _keys_in(ctx: ConformanceContext, urn: str, prop: str) -> list[ResourceRecord]:
    by_urn = ctx.plan.by_urn()
    r = by_urn.get(urn)
    if r is None:
        return []
    return [by_urn[u] for u in r.property_dependencies.get(prop, []) if u in by_urn and by_urn[u].type == KMS_KEY]


def _uses(ctx: ConformanceContext) -> Iterator[tuple[str, str | None, str, ResourceRecord | str, list[_Principal]]]:
    """(urn, object ref, field, key record or literal ARN, launching principals) for every node volume key."""
    slr = _Principal(f"the EC2 Auto Scaling service-linked role ({SLR_NAME})", arn_suffix=f"/{SLR_NAME}")
    by_urn = ctx.plan.by_urn()
    launched: dict[str, list[_Principal]] = {}
    for r in ctx.plan.resources:
        if r.type in (ASG, NODE_GROUP):
            for prop in ("launchTemplate", "mixedInstancesPolicy"):
                for u in r.property_dependencies.get(prop, []):
                    if u in by_urn and by_urn[u].type == LAUNCH_TEMPLATE:
                        launched.setdefault(u, [slr])
    for lt_urn in launched:
        lt = by_urn[lt_urn]
        for i, bdm in enumerate(lt.inputs.get("blockDeviceMappings") or []):
            ebs = (bdm or {}).get("ebs") or {}
            kid = ebs.get("kmsKeyId")
            if kid is None:
                continue
            keys: list[ResourceRecord | str] = list(_keys_in(ctx, lt_urn, "blockDeviceMappings")) or (
                [str(kid)] if not is_unknown(kid) else []
            )
            for k in keys:
                yield lt_urn, None, f"blockDeviceMappings[{i}].ebs.kmsKeyId", k, launched[lt_urn]
    karpenter = [_Principal(f"Karpenter controller role {r.name}", role=r) for r in _karpenter_roles(ctx)]
    for o in objects(ctx):
        if o.kind != "EC2NodeClass" or not o.api_version.startswith("karpenter.k8s.aws/"):
            continue
        for i, bdm in enumerate(o.spec.get("blockDeviceMappings") or []):
            ebs = (bdm or {}).get("ebs") or {}
            kid = ebs.get("kmsKeyID")
            if kid is None:
                continue
            keys2: list[ResourceRecord | str] = ([] if o.derived else list(_keys_in(ctx, o.urn, "spec"))) or (
                [str(kid)] if not is_unknown(kid) else []
            )
            for k in keys2:
                yield (
                    o.urn,
                    o.ref,
                    f"spec.blockDeviceMappings[{i}].ebs.kmsKeyID",
                    k,
                    karpenter or [_Principal("the Karpenter controller role (none bound in this plan)")],
                )


def _delegates(p: Any) -> bool:
    return any(a.endswith(":root") or a == "*" or re.fullmatch(r"\d{12}", a) for a in _principals(p))


def _kms_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    grants = ctx.plan.of_type(KMS_GRANT)
    for urn, ref, field, key, principals in _uses(ctx):
        key_stmts: list[dict[str, Any]] | None
        if isinstance(key, str):
            if "alias/aws/" in key:
                continue  # AWS managed key: its policy lets every principal of the account use it through EC2
            key_label, key_stmts, key_urn = key, None, None  # a key outside the plan: its policy is unseen
        else:
            key_label, key_urn = key.name, key.urn
            policy = key.inputs.get("policy")
            if is_unknown(policy):
                key_stmts = None
            elif not policy:
                # No policy given: KMS applies its default key policy, which delegates to IAM (account root).
                key_stmts = [{"Effect": "Allow", "Principal": {"AWS": ACCOUNT_ROOT}, "Action": "kms:*"}]
            else:
                key_stmts = _policy(policy)
        for pr in principals:
            iam, iam_unknown = _role_statements(ctx, pr.role) if pr.role is not None else ([], False)
            missing: list[str] = []
            unverified: list[str] = []
            for action in REQUIRED_ACTIONS:
                granted = any(
                    key_urn is not None
                    and key_urn in g.property_dependencies.get("keyId", [])
                    and pr.role is not None
                    and pr.role.urn in g.property_dependencies.get("granteePrincipal", [])
                    and _GRANT_OPS[action] in _as_list(g.inputs.get("operations"))
                    for g in grants
                )
                if key_stmts is None:
                    # The key policy is unseen: it may name the principal itself.
                    if not granted:
                        unverified.append(action)
                    continue
                direct = _action_allowed(key_stmts, action, lambda p, pr=pr: pr.named_in(_principals(p), False))
                # An IAM policy counts only where the key policy delegates to the account, and a service-linked
                # role takes no IAM policies of ours.
                delegates = pr.role is not None and _action_allowed(key_stmts, action, _delegates)
                if direct or granted or (delegates and _action_allowed(iam, action)):
                    continue
                (unverified if delegates and iam_unknown else missing).append(action)
            if missing:
                yield Finding(
                    "invariants.kms",
                    "error",
                    urn,
                    field,
                    f"{pr.label} launches nodes whose volumes use KMS key {key_label}, but neither the key policy "
                    f"nor {'its IAM policies' if pr.role is not None else 'a grant'} allow {', '.join(missing)}: the "
                    "instances terminate right after launch (Client.InternalError)",
                    f"{', '.join(REQUIRED_ACTIONS)} for {pr.label} on the key (a key policy statement naming it, "
                    "the account principal in the key policy plus the role's IAM policy, or a grant)",
                    KMS_DOCS,
                    object=ref,
                )
            elif unverified and pr.role is not None:
                yield Finding(
                    "invariants.kms",
                    "warning",
                    urn,
                    field,
                    f"{pr.label} launches nodes whose volumes use KMS key {key_label}; the key policy does not name it "
                    f"for {', '.join(unverified)}, and {'the key policy' if key_stmts is None else 'its IAM policy'} "
                    "is only known after deploy, so whether it may use the key cannot be checked offline",
                    f"{', '.join(REQUIRED_ACTIONS)} for {pr.label} in the key policy (checkable before deploy) or in "
                    "its IAM policy",
                    KMS_DOCS,
                    object=ref,
                )


# -- autoscaler version -----------------------------------------------------------------------------------------


def _minor(version: str) -> str | None:
    m = re.match(r"^v?(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _ca_versions(ctx: ConformanceContext) -> Iterator[tuple[str, str | None, str, str, str]]:
    """(urn, object ref, field, version, source) of each cluster-autoscaler in the plan."""
    seen_owners = set()
    for a in collect_agents(ctx).of(CLUSTER_AUTOSCALER):
        for c in containers(a.pod.pod_spec):
            tag = image_tag(image_of(c))
            if "cluster-autoscaler" in image_of(c) and _minor(tag):
                seen_owners.add(a.obj.urn)
                yield (
                    a.obj.urn,
                    a.obj.ref,
                    "spec.template.spec.containers.image",
                    tag,
                    f"{a.source} image {image_of(c)}",
                )
    for r in releases(ctx, "cluster-autoscaler"):
        if r.urn in seen_owners:
            continue
        values = r.inputs.get("values") or {}
        pinned = (values.get("image") or {}).get("tag")
        version = str(r.inputs.get("version") or "")
        if isinstance(pinned, str) and not is_unknown(pinned):
            yield (
                r.urn,
                None,
                "values.image.tag",
                pinned,
                f"release values image.tag of chart cluster-autoscaler@{version}",
            )
            continue
        chart = VENDOR_CHARTS / f"cluster-autoscaler-{version}" / "Chart.yaml"
        if chart.is_file():
            app = str((yaml.safe_load(chart.read_text()) or {}).get("appVersion") or "")
            yield r.urn, None, "version", app, f"chart cluster-autoscaler@{version} appVersion"


def _version_findings(ctx: ConformanceContext) -> Iterator[Finding]:
    want = ctx.kubernetes_version
    for urn, ref, field, version, source in _ca_versions(ctx):
        got = _minor(version)
        if got is not None and got != _minor(want):
            yield Finding(
                "invariants.autoscaler-version",
                "error",
                urn,
                field,
                f"cluster-autoscaler {version} (minor {got}) would run against Kubernetes {want}: CA only supports "
                "the Kubernetes minor it is built for",
                f"a cluster-autoscaler {want}.x image (a chart whose appVersion is {want}.x)",
                f"{source}; {CA_VERSION_DOCS}",
                object=ref,
            )


@register_check("invariants")
def check_invariants(ctx: ConformanceContext) -> Iterator[Finding]:
    yield from guarded(ctx, "invariants", "KMS", lambda: _kms_findings(ctx))
    yield from guarded(ctx, "invariants", "autoscaler version", lambda: _version_findings(ctx))


__all__ = ["REQUIRED_ACTIONS", "check_invariants"]
