"""IAM guardrails through the statement evaluator: iam-no-admin-star on every place a document or a managed
policy ARN can sit, and iam-no-public-trust on role trust policies."""

import json

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages
from gpucloud.policies.gpucloud_policies.security import iam

POLICY = "aws:iam/policy:Policy"
ROLE = "aws:iam/role:Role"
FIX = "Fix: grant the specific actions on the specific resources the workload needs."
ADMIN = "arn:aws:iam::aws:policy/AdministratorAccess"
POWER = "arn:aws:iam::aws:policy/PowerUserAccess"
WORKER = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"


def doc(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action="*", resource="*", **extra):
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


# --- the evaluator ---------------------------------------------------------------------------------------


def test_wildcards_match_actions_case_insensitively_and_resources_exactly():
    assert iam.matches(["S3:Get*"], "s3:GetObject", fold=True)
    assert not iam.matches(["S3:Get*"], "s3:GetObject", fold=False)
    assert iam.matches(["ec2:Describe?nstances"], "ec2:DescribeInstances", fold=True)
    assert not iam.matches(["ec2:Describe?"], "ec2:DescribeInstances", fold=True)
    assert iam.matches(["arn:aws:*:*:*:*"], "arn:aws:iam::000000000000:role/x", fold=False)
    assert not iam.matches(["arn:aws:s3:::b/*"], "arn:aws:s3:::c/k", fold=False)
    assert not iam.matches([7, None], "x", fold=True)
    assert iam.matches(["a.b"], "a.b", fold=False) and not iam.matches(["a.b"], "axb", fold=False)


def test_allowing_follows_explicit_deny_and_not_elements():
    d = iam.document(
        doc(
            allow("s3:*", "arn:aws:s3:::b/*"),
            {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "ec2:TerminateInstances", "Resource": "*"},
            {"Effect": "Deny", "Action": "rds:*", "Resource": "*", "Condition": {"Bool": {"aws:x": "true"}}},
        )
    )
    assert iam.allowing(d, "s3:GetObject", "arn:aws:s3:::b/k") == [0, 1]
    assert iam.allowing(d, "iam:CreateUser", "*") == []
    assert iam.allowing(d, "ec2:TerminateInstances", "arn:aws:ec2:us-east-1:1:instance/i") == []
    # A conditional Deny may not apply, so the grant stands.
    assert iam.allowing(d, "rds:DeleteDBInstance", "arn:aws:rds:x") == [1]
    nr = iam.document(doc({"Effect": "Allow", "Action": "*", "NotResource": "arn:aws:s3:::secret/*"}))
    assert iam.allowing(nr, "s3:GetObject", "arn:aws:s3:::secret/k") == []
    assert iam.allowing(nr, "s3:GetObject", "arn:aws:s3:::open/k") == [0]
    # A statement without Action/NotAction or without Resource/NotResource grants nothing.
    assert iam.allowing(iam.document(doc({"Effect": "Allow", "Resource": "*"})), "s3:Get", "*") == []
    assert iam.allowing(iam.document(doc({"Effect": "Allow", "Action": "*"})), "s3:Get", "*") == []


def test_grants_service_uses_probes_no_policy_names():
    full = iam.document(doc(allow()))
    assert iam.grants_service(full, iam.ANY_SERVICE) == [0]
    scoped = iam.document(doc(allow("s3:*", "arn:aws:s3:::corpus/*"), allow("ec2:Describe*")))
    assert iam.grants_service(scoped, "s3") == []
    assert iam.grants_service(scoped, "ec2") == []
    buckets = iam.document(doc(allow("s3:*", "arn:aws:s3:::*")))
    assert iam.grants_service(buckets, "s3") == [0]
    assert iam.grants_service(iam.document(doc(allow("s3:*", "arn:aws:s3:*:*:*"))), "s3") == [0]
    assert iam.grants_service(None, "s3") == []
    assert iam.probe_resources("kms") == (
        "arn:aws:kms:us-east-1:000000000000:GpucloudProbe/GpucloudProbe",
        "arn:aws:kms::000000000000:GpucloudProbe/GpucloudProbe",
        "arn:aws:kms:::GpucloudProbe",
    )


def test_documents_and_managed_policy_arns():
    assert iam.document('{"Statement": []}') == {"Statement": []}
    assert iam.document("{") is None
    assert iam.document("[]") is None
    assert iam.document(42) is None
    assert iam.document({"Statement": [allow()]}) == {"Statement": [allow()]}
    assert iam.managed_name(POWER) == "PowerUserAccess"
    assert iam.managed_name("arn:aws:iam::aws:policy/job-function/ViewOnlyAccess") == "ViewOnlyAccess"
    assert iam.managed_name("arn:aws:iam::123456789012:policy/AdministratorAccess") == ""
    assert iam.managed_document("arn:aws:iam::123456789012:policy/AdministratorAccess") is None
    assert iam.managed_document(WORKER) is None
    assert iam.managed_document("arn:aws-us-gov:iam::aws:policy/AdministratorAccess") == {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
    }
    assert iam.as_list(None) == [] and iam.as_list("a") == ["a"] and iam.as_list(["a"]) == ["a"]


def test_statements_skip_non_objects_and_read_every_element():
    [s] = iam.statements(
        {"Statement": ["junk", {"Effect": "Deny", "NotAction": "a", "NotResource": "b", "Condition": {"x": 1}}]}
    )
    assert (s.index, s.effect, s.actions, s.not_actions, s.resources, s.not_resources, s.conditional) == (
        1,
        "Deny",
        None,
        ["a"],
        None,
        ["b"],
        True,
    )
    assert iam.statements(None) == []


# --- iam-no-admin-star -----------------------------------------------------------------------------------


def test_admin_star_on_policy_documents():
    resources = [
        Res(POLICY, "star-star", {"policy": doc(allow("*:*"))}),
        Res("aws:iam/rolePolicy:RolePolicy", "star-list", {"policy": doc(allow(["s3:GetObject", "*"]))}),
        Res(POLICY, "scoped", {"policy": doc(allow("s3:GetObject", "arn:aws:s3:::b/*"))}),
        Res(POLICY, "star-on-one-bucket", {"policy": doc(allow("*", "arn:aws:s3:::b"))}),
        Res(POLICY, "arn-pattern", {"policy": doc(allow("*", "arn:aws:*:*:*:*"))}),
        Res(POLICY, "not-action", {"policy": doc({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})}),
        Res(POLICY, "denied", {"policy": doc(allow(), {"Effect": "Deny", "Action": "*", "Resource": "*"})}),
        Res(POLICY, "deny-only", {"policy": doc({"Effect": "Deny", "Action": "*", "Resource": "*"})}),
        Res(POLICY, "not-json", {"policy": "{"}),
        Res("aws:iam/userPolicy:UserPolicy", "user", {"policy": doc(allow("iam:*"))}),
        Res("aws:iam/groupPolicy:GroupPolicy", "group", {"policy": doc(allow("sts:*"))}),
        Res("aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy", "sso", {"inlinePolicy": doc(allow())}),
        Res(POLICY, "describe", {"policy": doc(allow(["ec2:Describe*", "s3:List*"]))}),
    ]
    assert flagged("iam-no-admin-star", resources) == {
        "star-star",
        "star-list",
        "arn-pattern",
        "not-action",
        "user",
        "group",
        "sso",
    }
    assert resource_messages("iam-no-admin-star", resources[0]) == [
        "star-star: policy Statement[0] allows every action on every resource (full admin, whether by Action '*', "
        f"NotAction or NotResource). {FIX}"
    ]
    assert resource_messages("iam-no-admin-star", resources[9]) == [
        f"user: policy Statement[0] allows iam:* on every resource (admin of the service). {FIX}"
    ]


@pytest.mark.parametrize("service", ["iam", "sts", "ec2", "s3", "kms", "organizations"])
def test_privileged_service_wildcards(service):
    r = Res(POLICY, "p", {"policy": doc(allow(f"{service}:*"))})
    assert resource_messages("iam-no-admin-star", r) == [
        f"p: policy Statement[0] allows {service}:* on every resource (admin of the service). {FIX}"
    ]
    assert resource_messages("iam-no-admin-star", r, {"privilegedServices": ["lambda"]}) == []


def test_several_services_are_named_together():
    r = Res(POLICY, "p", {"policy": doc(allow(["iam:*"]), allow("ec2:*"))})
    assert resource_messages("iam-no-admin-star", r) == [
        f"p: policy Statement[0, 1] allows iam:*, ec2:* on every resource (admin of the service). {FIX}"
    ]


def test_attachments_of_every_kind():
    def attach(kind, name, key, value):
        return Res(f"aws:{kind}", name, {key: value})

    resources = [
        attach("iam/rolePolicyAttachment:RolePolicyAttachment", "role-admin", "policyArn", ADMIN),
        attach("iam/rolePolicyAttachment:RolePolicyAttachment", "role-worker", "policyArn", WORKER),
        attach(
            "iam/userPolicyAttachment:UserPolicyAttachment",
            "user-iam",
            "policyArn",
            "arn:aws:iam::aws:policy/IAMFullAccess",
        ),
        attach(
            "iam/groupPolicyAttachment:GroupPolicyAttachment",
            "group-s3",
            "policyArn",
            "arn:aws:iam::aws:policy/AmazonS3FullAccess",
        ),
        attach(
            "iam/policyAttachment:PolicyAttachment",
            "shared-ec2",
            "policyArn",
            "arn:aws:iam::aws:policy/AmazonEC2FullAccess",
        ),
        attach(
            "iam/policyAttachment:PolicyAttachment",
            "customer",
            "policyArn",
            "arn:aws:iam::123456789012:policy/AdministratorAccess",
        ),
        attach("ssoadmin/managedPolicyAttachment:ManagedPolicyAttachment", "sso-admin", "managedPolicyArn", ADMIN),
        attach(
            "iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
            "excl-power",
            "policyArns",
            [WORKER, POWER],
        ),
        attach(
            "iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
            "excl-ok",
            "policyArns",
            [WORKER, "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"],
        ),
        attach(
            "iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive",
            "excl-user",
            "policyArns",
            ["arn:aws:iam::aws:policy/AWSOrganizationsFullAccess"],
        ),
        attach(
            "iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive", "excl-group", "policyArns", [ADMIN]
        ),
        attach(
            "ssoadmin/managedPolicyAttachmentsExclusive:ManagedPolicyAttachmentsExclusive",
            "sso-excl",
            "managedPolicyArns",
            [POWER],
        ),
    ]
    assert flagged("iam-no-admin-star", resources) == {
        "role-admin",
        "user-iam",
        "group-s3",
        "shared-ec2",
        "sso-admin",
        "excl-power",
        "excl-user",
        "excl-group",
        "sso-excl",
    }
    assert resource_messages("iam-no-admin-star", resources[7]) == [
        "excl-power: policyArns[1] (PowerUserAccess) Statement[0] allows every action on every resource (full "
        f"admin, whether by Action '*', NotAction or NotResource). {FIX}"
    ]
    assert resource_messages("iam-no-admin-star", resources[2]) == [
        f"user-iam: policyArn (IAMFullAccess) Statement[0] allows iam:* on every resource (admin of the service). {FIX}"
    ]


def test_role_managed_arns_and_inline_policies():
    resources = [
        Res(ROLE, "managed-admin", {"managedPolicyArns": [WORKER, ADMIN]}),
        Res(ROLE, "managed-ok", {"managedPolicyArns": [WORKER]}),
        Res(
            ROLE,
            "inline-star",
            {
                "inlinePolicies": [
                    {"name": "ok", "policy": doc(allow("s3:GetObject"))},
                    {"name": "x", "policy": doc(allow("*"))},
                ]
            },
        ),
        Res(ROLE, "inline-ok", {"inlinePolicies": [{"name": "ok", "policy": doc(allow("s3:GetObject"))}]}),
    ]
    assert flagged("iam-no-admin-star", resources) == {"managed-admin", "inline-star"}
    assert resource_messages("iam-no-admin-star", resources[0]) == [
        "managed-admin: managedPolicyArns[1] (AdministratorAccess) Statement[0] allows every action on every "
        f"resource (full admin, whether by Action '*', NotAction or NotResource). {FIX}"
    ]
    assert resource_messages("iam-no-admin-star", resources[2]) == [
        "inline-star: inlinePolicies[1] 'x' Statement[0] allows every action on every resource (full admin, "
        f"whether by Action '*', NotAction or NotResource). {FIX}"
    ]
    with pytest.raises(UnknownValueError):
        resource_messages("iam-no-admin-star", Res(POLICY, "u", {"policy": UNKNOWN}))


# --- iam-no-public-trust ---------------------------------------------------------------------------------


def trust(**statement):
    return doc({"Effect": "Allow", "Action": "sts:AssumeRole", **statement})


def test_public_trust():
    resources = [
        Res(ROLE, "star", {"assumeRolePolicy": trust(Principal="*")}),
        Res(ROLE, "aws-star", {"assumeRolePolicy": trust(Principal={"AWS": "*"})}),
        Res(ROLE, "aws-list", {"assumeRolePolicy": trust(Principal={"AWS": ["arn:aws:iam::1:root", "*"]})}),
        Res(ROLE, "not-principal", {"assumeRolePolicy": trust(NotPrincipal={"AWS": "arn:aws:iam::1:root"})}),
        Res(
            ROLE,
            "conditioned",
            {
                "assumeRolePolicy": trust(
                    Principal={"AWS": "*"}, Condition={"StringEquals": {"aws:PrincipalOrgID": "o"}}
                )
            },
        ),
        Res(ROLE, "service", {"assumeRolePolicy": trust(Principal={"Service": "ec2.amazonaws.com"})}),
        Res(ROLE, "account", {"assumeRolePolicy": trust(Principal={"AWS": "arn:aws:iam::1:root"})}),
        Res(ROLE, "deny-star", {"assumeRolePolicy": doc({"Effect": "Deny", "Principal": "*", "Action": "*"})}),
        Res(ROLE, "junk", {"assumeRolePolicy": "{"}),
        Res(ROLE, "none", {}),
    ]
    assert flagged("iam-no-public-trust", resources) == {"star", "aws-star", "aws-list", "not-principal"}
    assert resource_messages("iam-no-public-trust", resources[1]) == [
        "aws-star: assumeRolePolicy Statement[0] trusts Principal '*' without a condition: anyone it admits can "
        "assume this role. Fix: name the trusted account, role or service principal, or add a Condition that "
        "restricts who (aws:PrincipalOrgID, aws:SourceAccount, sts:ExternalId; for an OIDC provider, its ':sub' "
        "claim)."
    ]
    assert iam.public_trust({"Statement": ["x", {"Effect": "Allow", "Principal": "*"}]}) == [1]
    assert iam.principal_is_public("arn:aws:iam::1:root") is False
