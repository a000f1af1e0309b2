"""What makes "read" true: for every (type, path) a guardrail claims from the surface inventory, a resource with a
bad value at that very path is flagged and one with a good value is not. Generated from the inventory, so a
provider upgrade that adds a type to a claimed surface is tested here too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpucloud import surface
from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import coverage, secret_sources
from gpucloud.policies.gpucloud_policies.security import (
    iam_admin,
    k8s_rbac_admin,
    k8s_rbac_anonymous,
    resource_policy_public,
)

# A GitHub token in gitleaks' format (readers/secrets.py TOKENS): an error wherever it sits in plain text.
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HIGH_ENTROPY = "API_KEY=Zx9Qw2Er7Ty4Ui1Op3As"


def nested(path: str, value: Any, lists: bool) -> dict[str, Any]:
    """Props holding ``value`` at the dotted path; with ``lists``, every intermediate block is a one-item list
    (the engine shows a nested block either way)."""
    steps = path.split(".")
    node: Any = value
    for i, step in enumerate(reversed(steps)):
        node = {step: [node] if lists and i else node}
    out: dict[str, Any] = node
    return out


SECRET_CASES = [(t, p) for t in sorted(secret_sources.inventory_types()) for p in secret_sources.store_paths(t)]


def test_secret_reads_cover_every_plain_text_store() -> None:
    # Every inventory type with a plain-text store is read, except those whose dedicated reader reads them and
    # those the scope table puts out of scope with its reason.
    assert len(SECRET_CASES) == 140
    assert ("aws:codebuild/project:Project", "environment.environmentVariables") in SECRET_CASES
    assert ("aws:sagemaker/model:Model", "primaryContainer.environment") in SECRET_CASES
    assert ("kubernetes:storage.k8s.io/v1:StorageClassList", "items.parameters") in SECRET_CASES
    assert "kubernetes:core/v1:Secret" not in secret_sources.inventory_types()
    assert "aws:lambda/function:Function" not in secret_sources.inventory_types()  # its dedicated reader


@pytest.mark.parametrize("lists", [False, True])
def test_a_token_at_every_claimed_secret_path_is_flagged(lists: bool) -> None:
    bad = [Res(t, f"bad{i}", nested(p, GH, lists)) for i, (t, p) in enumerate(SECRET_CASES)]
    good = [Res(t, f"good{i}", nested(p, "/app/config/endpoint", lists)) for i, (t, p) in enumerate(SECRET_CASES)]
    assert stack_flagged("no-plaintext-secrets", [*bad, *good]) == {r.name for r in bad}


def test_every_claimed_secret_path_as_a_map_and_as_name_value_pairs() -> None:
    as_map = [Res(t, f"m{i}", nested(p, {"GH_TOKEN": GH}, False)) for i, (t, p) in enumerate(SECRET_CASES)]
    pairs = [Res(t, f"p{i}", nested(p, [{"name": "GH", "value": GH}], False)) for i, (t, p) in enumerate(SECRET_CASES)]
    assert stack_flagged("no-plaintext-secrets", [*as_map, *pairs]) == {r.name for r in [*as_map, *pairs]}
    messages = dict(stack_messages("no-plaintext-secrets", [pairs[0]]))
    assert f"{SECRET_CASES[0][1]}[0].value holds a GitHub token" in messages["p0"]


def test_high_entropy_at_every_claimed_secret_path_is_a_warning_only() -> None:
    warned = [Res(t, f"w{i}", nested(p, HIGH_ENTROPY, False)) for i, (t, p) in enumerate(SECRET_CASES)]
    assert stack_flagged("no-plaintext-secrets", warned) == set()
    assert stack_flagged("secrets-high-entropy", warned) == {r.name for r in warned}


def test_secret_reads_skip_unknown_values() -> None:
    unknown = Res("aws:sagemaker/model:Model", "u", {"primaryContainer": {"environment": UNKNOWN}})
    assert stack_flagged("no-plaintext-secrets", [unknown]) == set()


def test_rendered_objects_are_read_by_their_apiversion_and_kind() -> None:
    from gpucloud.policies.gpucloud_policies import k8s

    manifest = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}}
    values = {**manifest, "parameters": {"token": GH}}
    token = k8s.set_derived([("urn:pulumi:test::test::kubernetes:helm.sh/v3:Release::r", "chart x@1", values)])
    try:
        found = list(secret_sources.inventory_values([]))
    finally:
        k8s.reset_derived(token)
    assert [(v.field, v.value) for v in found] == [("StorageClass fast (from chart x@1) parameters.token", GH)]


# --- principals --------------------------------------------------------------------------------------------

PUBLIC_DOC = json.dumps({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "x:Get", "Resource": "*"}]})
SCOPED_DOC = json.dumps(
    {
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "x:Get",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}},
            }
        ]
    }
)
PRINCIPAL_CASES = [(t, p) for t, ps in sorted(resource_policy_public.documents().items()) for p in ps]


def test_principal_reads_are_the_inventory_less_what_is_out_of_scope() -> None:
    carried = {t for t, s in surface.types().items() if "principal" in s}
    out = {t for t in carried if coverage.scope().get(t, {}).get("principal", "").startswith("out of scope")}
    # The role's trust policy is iam-no-public-trust's; everything else is read here.
    assert set(resource_policy_public.documents()) == carried - out - {"aws:iam/role:Role"}
    assert len(PRINCIPAL_CASES) == 86


def _value(path: str, bad: bool) -> Any:
    if path.rsplit(".", 1)[-1] in resource_policy_public.PRINCIPAL_LEAVES:
        return "*" if bad else "123456789012"
    return PUBLIC_DOC if bad else SCOPED_DOC


@pytest.mark.parametrize("lists", [False, True])
def test_a_public_principal_at_every_claimed_path_is_flagged(lists: bool) -> None:
    bad = [Res(t, f"bad{i}", nested(p, _value(p, True), lists)) for i, (t, p) in enumerate(PRINCIPAL_CASES)]
    good = [Res(t, f"good{i}", nested(p, _value(p, False), lists)) for i, (t, p) in enumerate(PRINCIPAL_CASES)]
    assert flagged("resource-policy-no-public-principal", [*bad, *good]) == {r.name for r in bad}


def test_documents_as_objects_and_data_access_policies() -> None:
    doc = Res("aws:sqs/queue:Queue", "q", {"policy": json.loads(PUBLIC_DOC)})
    assert flagged("resource-policy-no-public-principal", [doc]) == {"q"}
    aoss = "aws:opensearch/serverlessAccessPolicy:ServerlessAccessPolicy"
    rules = [{"Rules": [{"ResourceType": "index", "Resource": ["index/x/*"]}], "Principal": ["*"]}]
    named = [{"Rules": rules[0]["Rules"], "Principal": ["arn:aws:iam::123456789012:role/reader"]}]
    found = [Res(aoss, "open", {"policy": json.dumps(rules)}), Res(aoss, "named", {"policy": json.dumps(named)})]
    assert flagged("resource-policy-no-public-principal", found) == {"open"}


def test_a_domain_in_a_vpc_is_not_judged_on_its_open_access_policy() -> None:
    domain = "aws:opensearch/domain:Domain"
    public = Res(domain, "public", {"accessPolicies": PUBLIC_DOC})
    in_vpc = Res(domain, "vpc", {"accessPolicies": PUBLIC_DOC, "vpcOptions": {"subnetIds": ["subnet-1"]}})
    assert flagged("resource-policy-no-public-principal", [public, in_vpc]) == {"public"}


def test_an_unknown_document_is_undecided() -> None:
    from pulumi_policy.proxy import UnknownValueError

    with pytest.raises(UnknownValueError):
        resource_messages("resource-policy-no-public-principal", Res("aws:sqs/queue:Queue", "q", {"policy": UNKNOWN}))
    queue = Res("aws:sqs/queue:Queue", "q", {"policy": UNKNOWN})
    msgs = resource_messages("resource-policy-no-public-principal", queue, {"unknowns": "block"})
    assert len(msgs) == 1 and "cannot be decided at preview (unknown: policy)" in msgs[0]


# --- IAM grants --------------------------------------------------------------------------------------------

ADMIN_DOC = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
READ_DOC = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
ADMIN_ARN = "arn:aws:iam::aws:policy/AdministratorAccess"
READ_ARN = "arn:aws:iam::aws:policy/ReadOnlyAccess"
CFN_YAML = """AWSTemplateFormatVersion: '2010-09-09'
Resources:
  Admin:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument: {Statement: [{Effect: Allow, Principal: {Service: ec2.amazonaws.com}}]}
      RoleName: !Sub '${AWS::StackName}-admin'
      Policies:
        - PolicyName: all
          PolicyDocument:
            Statement: [{Effect: Allow, Action: '%s', Resource: '*'}]
"""
IAM_CASES = [(t, p) for t, ps in sorted(iam_admin.grants().items()) for p in ps]


def _iam_props(token: str, path: str, bad: bool) -> dict[str, Any]:
    leaf = path.rsplit(".", 1)[-1]
    if leaf == "templateBody":
        return {leaf: CFN_YAML % ("*" if bad else "s3:GetObject")}
    if leaf == "desiredState":
        return {
            "typeName": "AWS::IAM::ManagedPolicy",
            leaf: json.dumps({"PolicyDocument": ADMIN_DOC if bad else READ_DOC}),
        }
    if leaf in iam_admin.ARN_LEAVES:
        return nested(path, ADMIN_ARN if bad else READ_ARN, False)
    if "." in path:  # a document inside a named block (a Role's inlinePolicies)
        head, _ = path.rsplit(".", 1)
        return nested(head, [{"name": "p", leaf: json.dumps(ADMIN_DOC if bad else READ_DOC)}], False)
    return {leaf: json.dumps(ADMIN_DOC if bad else READ_DOC)}


def test_iam_reads_are_the_inventory_less_boundaries_and_kubernetes() -> None:
    assert len(IAM_CASES) == 22
    assert ("aws:budgets/budgetAction:BudgetAction", "definition.iamActionDefinition.policyArn") in IAM_CASES
    assert ("aws:cloudformation/stack:Stack", "templateBody") in IAM_CASES
    assert ("aws:iam/role:Role", "inlinePolicies.policy") in IAM_CASES
    assert "aws:iam/user:User" not in iam_admin.grants()  # a permissions boundary only: out of scope


def test_an_admin_grant_at_every_claimed_iam_path_is_flagged() -> None:
    bad = [Res(t, f"bad{i}", _iam_props(t, p, True)) for i, (t, p) in enumerate(IAM_CASES)]
    good = [Res(t, f"good{i}", _iam_props(t, p, False)) for i, (t, p) in enumerate(IAM_CASES)]
    assert flagged("iam-no-admin-star", [*bad, *good]) == {r.name for r in bad}


def test_template_documents_name_where_they_are() -> None:
    stack = Res("aws:cloudformation/stack:Stack", "s", {"templateBody": CFN_YAML % "*"})
    [msg] = resource_messages("iam-no-admin-star", stack)
    assert "templateBody Resources.Admin.Policies[0] Statement[0] allows every action on every resource" in msg
    as_json = {"Resources": {"P": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyDocument": ADMIN_DOC}}}}
    stack = Res("aws:cloudformation/stack:Stack", "j", {"templateBody": json.dumps(as_json)})
    assert flagged("iam-no-admin-star", [stack]) == {"j"}
    attached = {"Resources": {"R": {"Type": "AWS::IAM::Group", "Properties": {"ManagedPolicyArns": [ADMIN_ARN]}}}}
    stack = Res("aws:cloudformation/stack:Stack", "a", {"templateBody": json.dumps(attached)})
    assert flagged("iam-no-admin-star", [stack]) == {"a"}
    assert flagged("iam-no-admin-star", [Res("aws:cloudformation/stack:Stack", "x", {"templateBody": ": ["})]) == set()
    # A document or ARN written with an intrinsic function is resolved at deploy time: undecided, not passed.
    from pulumi_policy.proxy import UnknownValueError

    sub = (CFN_YAML % "*").replace("Resource: '*'", "Resource: !Sub 'arn:${AWS::Partition}:s3:::b/*'")
    with pytest.raises(UnknownValueError):
        resource_messages("iam-no-admin-star", Res("aws:cloudformation/stack:Stack", "i", {"templateBody": sub}))


# --- Kubernetes RBAC ---------------------------------------------------------------------------------------

ANON_BINDING = {
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    "subjects": [{"kind": "Group", "name": "system:unauthenticated"}],
}
NAMED_BINDING = {
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "ml"}],
}
WILDCARD_ROLE = {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
NARROW_ROLE = {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}


def _k8s(token: str, body: dict[str, Any]) -> dict[str, Any]:
    meta = {"metadata": {"name": "x", "namespace": "ml"}}
    return {"items": [{**meta, **body}]} if token.endswith("List") else {**meta, **body}


def test_an_anonymous_binding_of_every_claimed_type_is_flagged() -> None:
    tokens = sorted(t for t in k8s_rbac_anonymous.GUARDRAIL.reads)
    assert len(tokens) == 18  # (Cluster)RoleBinding, its List and Patch, in v1, v1alpha1 and v1beta1
    bad = [Res(t, f"bad{i}", _k8s(t, ANON_BINDING)) for i, t in enumerate(tokens)]
    good = [Res(t, f"good{i}", _k8s(t, NAMED_BINDING)) for i, t in enumerate(tokens)]
    public_info = {**ANON_BINDING, "roleRef": {"kind": "ClusterRole", "name": "system:public-info-viewer"}}
    default = Res(tokens[0], "default", _k8s(tokens[0], public_info))
    assert stack_flagged("k8s-rbac-no-anonymous-binding", [*bad, *good, default]) == {r.name for r in bad}


def test_cluster_admin_of_every_claimed_type_is_a_warning() -> None:
    tokens = sorted(t for t in k8s_rbac_admin.GUARDRAIL.reads if t.startswith("kubernetes:"))
    assert len(tokens) == 36
    roles = [t for t in tokens if "Binding" not in t]
    bindings = [t for t in tokens if "Binding" in t]
    admin = {**NAMED_BINDING, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"}}
    masters = {**admin, "subjects": [{"kind": "Group", "name": "system:masters"}]}
    bad = [Res(t, f"r{i}", _k8s(t, WILDCARD_ROLE)) for i, t in enumerate(roles)]
    bad += [Res(t, f"b{i}", _k8s(t, admin)) for i, t in enumerate(bindings)]
    good = [Res(t, f"gr{i}", _k8s(t, NARROW_ROLE)) for i, t in enumerate(roles)]
    good += [Res(t, f"gb{i}", _k8s(t, NAMED_BINDING)) for i, t in enumerate(bindings)]
    good += [Res(bindings[0], "masters", _k8s(bindings[0], masters))]
    eks = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
    arn = "arn:aws:eks::aws:cluster-access-policy/"
    bad.append(
        Res(eks, "eks-admin", {"policyArn": arn + "AmazonEKSClusterAdminPolicy", "accessScope": {"type": "cluster"}})
    )
    good.append(Res(eks, "eks-view", {"policyArn": arn + "AmazonEKSViewPolicy", "accessScope": {"type": "cluster"}}))
    assert stack_flagged("k8s-rbac-wildcard-admin", [*bad, *good]) == {r.name for r in bad}
    assert k8s_rbac_admin.GUARDRAIL.enforcement.value == "advisory"


# --- messages: each names where the finding sits and the fix ----------------------------------------------


def test_rbac_messages() -> None:
    crb = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
    [(name, msg)] = stack_messages("k8s-rbac-no-anonymous-binding", [Res(crb, "anon", _k8s(crb, ANON_BINDING))])
    assert (name, msg) == (
        "anon",
        "anon: ClusterRoleBinding x binds ClusterRole 'view' to Group system:unauthenticated: every request without "
        "credentials gets it. Fix: bind the role to the service accounts, users or groups that need it.",
    )
    no_kind = {**ANON_BINDING, "roleRef": {"name": "edit"}}
    [(_, msg)] = stack_messages("k8s-rbac-no-anonymous-binding", [Res(crb, "k", _k8s(crb, no_kind))])
    assert "binds role 'edit' to Group system:unauthenticated" in msg
    unknown = {**ANON_BINDING, "subjects": UNKNOWN}
    assert stack_messages("k8s-rbac-no-anonymous-binding", [Res(crb, "u", _k8s(crb, unknown))], {"unknowns": "block"})
    cr = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
    fix = (
        "Fix: grant the verbs and resources the subject needs (a namespaced Role, or AmazonEKSEditPolicy / ViewPolicy)."
    )
    role = {"rules": [NARROW_ROLE["rules"][0], WILDCARD_ROLE["rules"][0]]}
    admin = {**NAMED_BINDING, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"}}
    eks = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
    arn = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    found = dict(
        stack_messages(
            "k8s-rbac-wildcard-admin",
            [
                Res(cr, "role", _k8s(cr, role)),
                Res(crb, "bind", _k8s(crb, admin)),
                Res(eks, "e", {"policyArn": arn, "accessScope": {"type": "cluster"}, "principalArn": "arn:r"}),
                Res(eks, "anon", {"policyArn": arn, "accessScope": {"type": "cluster"}}),
                Res(eks, "ns", {"policyArn": arn, "accessScope": {"type": "namespace", "namespaces": ["a"]}}),
            ],
        )
    )
    assert found == {
        "role": f"role: ClusterRole x rules[1] grant every verb on every resource (cluster-admin). {fix}",
        "bind": f"bind: ClusterRoleBinding x binds cluster-admin to ServiceAccount reader. {fix}",
        "e": f"e: policyArn AmazonEKSClusterAdminPolicy at cluster scope makes arn:r a cluster administrator. {fix}",
        "anon": f"anon: policyArn AmazonEKSClusterAdminPolicy at cluster scope makes its principal a cluster "
        f"administrator. {fix}",
    }
    assert stack_messages("k8s-rbac-wildcard-admin", [Res(eks, "u", {"policyArn": UNKNOWN})], {"unknowns": "block"})


def test_principal_messages() -> None:
    fix = resource_policy_public.FIX
    bare = Res("aws:ram/principalAssociation:PrincipalAssociation", "ram", {"principal": "*"})
    assert resource_messages("resource-policy-no-public-principal", bare) == [
        f"ram: principal is '*': everyone is granted access. {fix}"
    ]
    listed = Res(
        "aws:globalaccelerator/crossAccountAttachment:CrossAccountAttachment", "ga", {"principals": ["1", "*"]}
    )
    assert resource_messages("resource-policy-no-public-principal", listed) == [
        f"ga: principals[1] is '*': everyone is granted access. {fix}"
    ]
    nested_doc = Res(
        "aws:s3control/multiRegionAccessPointPolicy:MultiRegionAccessPointPolicy",
        "mrap",
        {"details": {"name": "m", "policy": PUBLIC_DOC}},
    )
    assert resource_messages("resource-policy-no-public-principal", nested_doc) == [
        f"mrap: details.policy Statement[0] allows Principal '*' without a condition: the resource is public. {fix}"
    ]
    broken = Res("aws:opensearch/serverlessAccessPolicy:ServerlessAccessPolicy", "b", {"policy": "[not json"})
    assert resource_messages("resource-policy-no-public-principal", broken) == []
    # An OpenSearch domain outside a VPC is judged; a VPC without subnets is not a placement.
    domain = "aws:elasticsearch/domain:Domain"
    empty_vpc = Res(domain, "d", {"accessPolicies": PUBLIC_DOC, "vpcOptions": {"subnetIds": []}})
    assert resource_messages("resource-policy-no-public-principal", empty_vpc) == [
        f"d: accessPolicies Statement[0] allows Principal '*' without a condition: the resource is public. {fix}"
    ]
    lam = Res("aws:lambda/permission:Permission", "p", {"principal": "*", "action": "lambda:InvokeFunction"})
    [msg] = resource_messages("resource-policy-no-public-principal", lam)
    assert msg.startswith("p: principal '*' with none of sourceArn, sourceAccount, principalOrgId set: every AWS")
    scoped = Res("aws:lambda/permission:Permission", "s", {"principal": "*", "sourceArn": "arn:aws:s3:::b"})
    assert resource_messages("resource-policy-no-public-principal", scoped) == []


def test_iam_messages() -> None:
    fix = "Fix: grant the specific actions on the specific resources the workload needs."
    role = Res(
        "aws:iam/role:Role",
        "r",
        {
            "assumeRolePolicy": "{}",
            "inlinePolicies": [{"name": "all", "policy": json.dumps(ADMIN_DOC)}, {"policy": json.dumps(ADMIN_DOC)}],
            "managedPolicyArns": [READ_ARN, ADMIN_ARN],
        },
    )
    assert resource_messages("iam-no-admin-star", role) == [
        f"r: managedPolicyArns[1] (AdministratorAccess) Statement[0] allows every action on every resource (full "
        f"admin, whether by Action '*', NotAction or NotResource). {fix}",
        f"r: inlinePolicies[0] 'all' Statement[0] allows every action on every resource (full admin, whether by "
        f"Action '*', NotAction or NotResource). {fix}",
        f"r: inlinePolicies[1].policy Statement[0] allows every action on every resource (full admin, whether by "
        f"Action '*', NotAction or NotResource). {fix}",
    ]
    cc = Res(
        "aws:cloudcontrol/resource:Resource",
        "cc",
        {"typeName": "AWS::IAM::Role", "desiredState": json.dumps({"ManagedPolicyArns": [ADMIN_ARN]})},
    )
    [msg] = resource_messages("iam-no-admin-star", cc)
    assert msg.startswith("cc: desiredState AWS::IAM::Role.ManagedPolicyArns[0] (AdministratorAccess) Statement[0]")
    other = Res("aws:cloudcontrol/resource:Resource", "o", {"typeName": "AWS::S3::Bucket", "desiredState": "{}"})
    assert resource_messages("iam-no-admin-star", other) == []
    from pulumi_policy.proxy import UnknownValueError

    with pytest.raises(UnknownValueError) as exc:
        resource_messages("iam-no-admin-star", Res("aws:iam/policy:Policy", "u", {"policy": UNKNOWN}))
    assert "policy is computed, so what it grants is unknown at preview" in str(exc.value.message)
    ref = {"Resources": {"R": {"Type": "AWS::IAM::Role", "Properties": {"ManagedPolicyArns": [{"Ref": "Arn"}]}}}}
    with pytest.raises(UnknownValueError) as exc:
        resource_messages(
            "iam-no-admin-star", Res("aws:cloudformation/stack:Stack", "t", {"templateBody": json.dumps(ref)})
        )
    assert "templateBody Resources.R.ManagedPolicyArns[0] is written with an intrinsic function" in str(
        exc.value.message
    )
    svc = Res(
        "aws:iam/policy:Policy",
        "s",
        {"policy": json.dumps({"Statement": [{"Effect": "Allow", "Action": "iam:*", "Resource": "*"}]})},
    )
    assert resource_messages("iam-no-admin-star", svc) == [
        f"s: policy Statement[0] allows iam:* on every resource (admin of the service). {fix}"
    ]
