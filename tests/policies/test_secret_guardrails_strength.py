"""Exact messages and undecided entries of the secret guardrails (GC-SEC-012, GC-SEC-154, GC-SEC-155).

Written against the mutants `scripts/mutation.py` left alive in security/userdata_secrets.py,
plaintext_secrets.py and secrets_entropy.py: a computed value before a secret must not stop the walk, and each
message is the one a user reads.
"""

from __future__ import annotations

import base64

import pytest
from pulumi_policy import PolicyResource
from pulumi_policy.proxy import unknown_checking_proxy

from gpucloud.guard.harness import UNKNOWN, Res, options, stack_flagged, stack_messages, urn
from gpucloud.policies.gpucloud_policies import secret_sources
from gpucloud.policies.gpucloud_policies.base import Undecided, UndecidedError
from gpucloud.policies.gpucloud_policies.secret_sources import Value

LT = "aws:ec2/launchTemplate:LaunchTemplate"
SSM = "aws:ssm/parameter:Parameter"
GH = "ghp_" + "Zq8xK2mN4pR7sT1vW3yB5dF6hJ9kL0cA2eG4"
PASSWORD = "PASSWORD=Zx9kQ2mP7vL4nR8sT1wY"


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def test_user_data_secret_after_a_computed_one():
    resources = [Res(LT, "sources-computed", {"userData": UNKNOWN}), Res(LT, "leaky", {"userData": b64(f"T={GH}")})]
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages("lt-no-secrets-in-userdata", resources, None, found)
    assert caught.value.undecided == [
        Undecided(
            f"urn:pulumi:test::test::{LT}::sources-computed",
            "userData",
            "the user data is computed, so its contents are unknown at preview",
        )
    ]
    assert found == [
        (
            "leaky",
            "leaky: userData contains a GitHub token (as written); user data is readable by anyone who can "
            "describe the instance or reach IMDS from it. Fix: rotate the credential and read it at boot from "
            "Secrets Manager / SSM Parameter Store with the node role.",
        )
    ]


def test_plaintext_secret_after_a_computed_one():
    resources = [
        Res(SSM, "sources-computed", {"type": "String", "value": UNKNOWN}),
        Res(SSM, "plain", {"type": "String", "value": GH}),
    ]
    assert stack_messages("no-plaintext-secrets", resources) == [
        (
            "plain",
            "plain: value holds a GitHub token (as written) in plain text. Fix: rotate it and keep it in a Secret "
            "(valueFrom.secretKeyRef), a SecureString parameter, or Secrets Manager referenced by ARN.",
        )
    ]


def test_high_entropy_message_threshold_and_tokens():
    resources = [
        Res(SSM, "sources-computed", {"type": "String", "value": UNKNOWN}),
        Res(SSM, "entropy", {"type": "String", "value": PASSWORD}),
        # A token in one layer and a high-entropy assignment in another: GC-SEC-154 reports it, not this advisory.
        Res(SSM, "token-too", {"type": "String", "value": f"{PASSWORD}\necho {b64('T=' + GH)} | base64 -d"}),
    ]
    assert stack_messages("secrets-high-entropy", resources) == [
        (
            "entropy",
            "entropy: value holds a high-entropy value assigned to PASSWORD (as written): it may be a credential. "
            "Fix: if it is one, move it to a secret store and rotate it; if not, rename the variable.",
        )
    ]
    # The configured floor is the one used (the value has 4.32 bits per character).
    assert stack_messages("secrets-high-entropy", resources, {"minEntropyBits": 4.5}) == []


# --- GC-SEC-153 k8s-pod-security-exemptions ------------------------------------------------------------------


def _daemonset(name: str, image: str) -> Res:
    body = {
        "metadata": {"name": name, "namespace": "logging"},
        "spec": {"template": {"spec": {"hostPID": True, "containers": [{"name": "c", "image": image}]}}},
    }
    return Res("kubernetes:apps/v1:DaemonSet", name, body)


EXEMPTIONS = [
    {"namespace": "logging", "name": "agent", "images": ["public.ecr.aws/x/agent"], "reason": "used"},
    {
        "namespace": "logging",
        "name": "shipper",
        "kind": "DaemonSet",
        "images": ["public.ecr.aws/x/fluent-bit"],
        "reason": "taken by another image",
    },
    {"namespace": "logging", "name": "ghost", "images": ["x"], "reason": "matches nothing"},
]
FIX = (
    "a stale entry, or one a workload inherits by its name. Fix: remove it, or correct its name, kind, images or "
    "chart to the daemon it is meant for."
)


def test_exemption_messages_after_a_used_entry():
    rs = [_daemonset("agent", "public.ecr.aws/x/agent:1"), _daemonset("shipper", "evil/miner:1")]
    assert stack_flagged("k8s-pod-security", rs, {"exemptions": EXEMPTIONS}) == {"shipper"}
    assert stack_messages("k8s-pod-security-exemptions", rs) == [
        (
            "shipper",
            "shipper: k8s-pod-security exemption DaemonSet logging/shipper (images ['public.ecr.aws/x/fluent-bit']) "
            f"is taken by a workload it does not exempt (another image or chart) in the plan: {FIX}",
        ),
        ("", f"stack: k8s-pod-security exemption logging/ghost (images ['x']) matches nothing in the plan: {FIX}"),
    ]


def test_exemptions_are_not_judged_when_a_chart_was_not_rendered():
    rs = [
        _daemonset("agent", "public.ecr.aws/x/agent:1"),
        Res("kubernetes:helm.sh/v3:Release", "rel", {"chart": "x", "namespace": "logging"}),
    ]
    stack_messages("k8s-pod-security", rs, {"exemptions": EXEMPTIONS, "unknowns": "block"})
    assert stack_messages("k8s-pod-security-exemptions", rs) == []


# --- secret_sources: where the values come from ----------------------------------------------------------------


def _fields(policy: str, resources: list[Res]) -> list[tuple[str, str]]:
    """(resource, field) of each finding: the message up to the verb."""
    out = []
    for name, message in stack_messages(policy, resources):
        head = message.removeprefix(f"{name}: ")
        out.append((name, head.split(" holds ", 1)[0].split(" contains ", 1)[0]))
    return out


def test_an_unknown_value_does_not_hide_a_known_one_beside_it():
    # Before, the first unknown ended the resource: the token after it was never read.
    lam = Res("aws:lambda/function:Function", "sources-fn", {"environment": {"variables": {"A": UNKNOWN, "B": GH}}})
    ssm = Res(SSM, "sources-p", {"type": "String", "value": UNKNOWN, "insecureValue": GH})
    assert _fields("no-plaintext-secrets", [lam, ssm]) == [
        ("sources-fn", "environment.variables.B"),
        ("sources-p", "insecureValue"),
    ]
    # A computed parameter name: the value is still read, weighed under the logical name.
    named = Res(SSM, "db-password", {"type": "String", "name": UNKNOWN, "value": "Zx9kQ2mP7vL4nR8sT1wY"})
    assert _fields("secrets-high-entropy", [named]) == [("db-password", "value")]


def test_every_value_source_names_its_field():
    pod = {
        "metadata": {"name": "api", "namespace": "ml"},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [
                        {
                            "name": "i",
                            "image": "a:1",
                            "env": [{"name": "X", "value": UNKNOWN}, {"name": "T", "value": GH}],
                        }
                    ],
                    "containers": [
                        {"name": "c", "image": "a:1", "env": [{"name": "N", "value": "1"}]},
                        {"name": "d", "image": "a:1", "env": [{"name": "T2", "value": GH}]},
                    ],
                }
            }
        },
    }
    containers = (
        '[{"environment": [{"name": "A", "value": "x"}]}, {"environment": [{"name": "B", "value": "%s"}, "junk"]}]'
    )
    rs = [
        Res("kubernetes:apps/v1:Deployment", "api", pod),
        Res(
            "kubernetes:core/v1:ConfigMap",
            "cm",
            {
                "metadata": {"name": "cm", "namespace": "ml"},
                "data": {"a": UNKNOWN, "b": f"T={GH}"},
                "binaryData": {"c": b64(GH)},
            },
        ),
        Res("aws:ecs/taskDefinition:TaskDefinition", "bad-json", {"containerDefinitions": "{not json"}),
        Res("aws:ecs/taskDefinition:TaskDefinition", "t", {"containerDefinitions": containers % GH}),
        Res(SSM, "secure", {"type": "SecureString", "value": GH}),
    ]
    assert _fields("no-plaintext-secrets", rs) == [
        ("api", "Deployment ml/api spec.template.spec.containers[1].env T2"),
        ("api", "Deployment ml/api spec.template.spec.initContainers[0].env T"),
        ("cm", "ConfigMap ml/cm data.b"),
        ("cm", "ConfigMap ml/cm binaryData.c"),
        ("t", "containerDefinitions[1].environment B"),
    ]


def test_user_data_of_templates_and_configurations_no_pool_uses():
    rs = [
        Res(LT, "lt", {"userData": b64(f"T={GH}")}),
        Res("aws:ec2/launchConfiguration:LaunchConfiguration", "lc", {"userDataBase64": b64(f"T={GH}")}),
        Res(LT, "none", {"imageId": "ami-0a1b2c3d4e5f60789"}),
    ]
    assert _fields("lt-no-secrets-in-userdata", rs) == [("lt", "userData"), ("lc", "userDataBase64")]
    assert _fields("lt-no-secrets-in-userdata", [Res(LT, "none", {"imageId": "ami-0a1b2c3d4e5f60789"})]) == []


ASG = "aws:autoscaling/group:Group"


def test_pool_user_data_goes_to_the_pool():
    # The template a pool boots with is judged as the pool's user data (reported on the pool, once).
    rs = [
        Res(LT, "lt", {"userData": b64(f"T={GH}"), "instanceType": "g6e.xlarge"}),
        Res(
            ASG, "asg", {"launchTemplate": {"id": UNKNOWN}, "maxSize": 2, "minSize": 0}, deps={"launchTemplate": ["lt"]}
        ),
    ]
    assert _fields("lt-no-secrets-in-userdata", rs) == [("asg", "userData")]
    # Karpenter: the EC2NodeClass's spec.userData is the NodePool's.
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "userData": f"T={GH}"},
    }
    ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"}
    node_pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {"template": {"spec": {"nodeClassRef": ref, "requirements": []}}},
    }
    karpenter = [
        Res("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "nc", node_class),
        Res("kubernetes:karpenter.sh/v1:NodePool", "np", node_pool),
    ]
    assert _fields("lt-no-secrets-in-userdata", karpenter) == [("np", "userData")]
    # Computed user data makes the pool undecided, on the pool. (Names of their own: the pack remembers the inputs
    # a resource policy saw per URN, and another test's known `lt` would fill the unknown in.)
    computed = [
        Res(LT, "sources-unknown-lt", {"userData": UNKNOWN}),
        Res(
            ASG,
            "sources-unknown-asg",
            {"launchTemplate": {"id": UNKNOWN}, "maxSize": 2},
            deps={"launchTemplate": ["sources-unknown-lt"]},
        ),
    ]
    with pytest.raises(UndecidedError) as caught:
        stack_messages("lt-no-secrets-in-userdata", computed)
    assert [(u.urn, u.field) for u in caught.value.undecided] == [
        (f"urn:pulumi:test::test::{ASG}::sources-unknown-asg", "userData")
    ]


def _resources(*rs: Res) -> list[PolicyResource]:
    """Resources as the engine hands a stack policy (the harness's own construction)."""
    return [
        PolicyResource(
            r.type, unknown_checking_proxy(dict(r.props)), urn(r.type, r.name), r.name, options(), None, None, [], {}
        )
        for r in rs
    ]


def test_value_sources_exactly():
    pod = {
        "metadata": {"name": "api", "namespace": "ml"},
        "spec": {
            "template": {
                "spec": {
                    "ephemeralContainers": [
                        {
                            "name": "e",
                            "image": "a:1",
                            "env": [{"name": "X", "value": UNKNOWN}, {"name": "T", "value": "t"}],
                        }
                    ],
                    "containers": [{"name": "c", "image": "a:1", "env": [{"name": "N", "value": "1"}]}],
                }
            }
        },
    }
    cm = {"metadata": {"name": "cm", "namespace": "ml"}, "data": {"a": UNKNOWN, "b": "x"}, "binaryData": {"c": "eA=="}}
    rs = _resources(
        Res("kubernetes:apps/v1:Deployment", "api", pod),
        Res("kubernetes:core/v1:ConfigMap", "cm", cm),
        Res(SSM, "p", {"type": UNKNOWN, "value": GH}),
        Res("aws:lambda/function:Function", "fn", {"environment": UNKNOWN}),
        Res("aws:ecs/taskDefinition:TaskDefinition", "t", {"containerDefinitions": UNKNOWN}),
        Res(
            "aws:ecs/taskDefinition:TaskDefinition",
            "t2",
            {"containerDefinitions": [{"environment": [{"name": "A", "value": "x"}]}]},
        ),
        Res(SSM, "q", {"type": "String", "name": "/ml/q", "value": "v"}),
        Res(SSM, "computed-name", {"type": "String", "name": UNKNOWN, "value": "w"}),
        Res("aws:lambda/function:Function", "vars", {"environment": {"variables": {"A": UNKNOWN, "B": "b"}}}),
    )
    dep, cfg = (
        "urn:pulumi:test::test::kubernetes:apps/v1:Deployment::api",
        "urn:pulumi:test::test::kubernetes:core/v1:ConfigMap::cm",
    )
    pods = "Deployment ml/api spec.template.spec"
    assert list(secret_sources.kubernetes(rs)) == [
        Value(dep, f"{pods}.containers[0].env N", "1", "N"),
        Value(dep, f"{pods}.ephemeralContainers[0].env", None),
        Value(dep, f"{pods}.ephemeralContainers[0].env T", "t", "T"),
        Value(cfg, "ConfigMap ml/cm data.a", None),
        Value(cfg, "ConfigMap ml/cm data.b", "x", "b"),
        Value(cfg, "ConfigMap ml/cm binaryData.c", "eA==", ""),  # binary data has no variable name to weigh
    ]
    aws = "urn:pulumi:test::test::aws"
    assert list(secret_sources.services(rs)) == [
        Value(f"{aws}:ssm/parameter:Parameter::p", "type", None),
        Value(f"{aws}:lambda/function:Function::fn", "environment.variables", None),
        Value(f"{aws}:ecs/taskDefinition:TaskDefinition::t", "containerDefinitions", None),
        Value(f"{aws}:ecs/taskDefinition:TaskDefinition::t2", "containerDefinitions[0].environment A", "x", "A"),
        Value(f"{aws}:ssm/parameter:Parameter::q", "value", "v", "/ml/q"),
        Value(f"{aws}:ssm/parameter:Parameter::computed-name", "value", "w", "computed-name"),
        Value(f"{aws}:lambda/function:Function::vars", "environment.variables.A", None),
        Value(f"{aws}:lambda/function:Function::vars", "environment.variables.B", "b", "B"),
    ]
    assert [v.scanned for v in (Value("u", "f", "1", "N"), Value("u", "f", "x"), Value("u", "f", None, "N"))] == [
        "N=1",
        "x",
        "",
    ]


def test_unused_templates_after_a_pool_and_base64_only_configurations():
    rs = [
        Res(ASG, "asg", {"launchTemplate": {"id": UNKNOWN}, "maxSize": 2}, deps={"launchTemplate": ["used"]}),
        Res(LT, "used", {"userData": b64("echo hello"), "instanceType": "g6e.xlarge"}),
        Res(LT, "unused", {"userData": b64(f"T={GH}")}),
    ]
    assert _fields("lt-no-secrets-in-userdata", rs) == [("unused", "userData")]
    only_b64 = [Res("aws:ec2/launchConfiguration:LaunchConfiguration", "lc", {"userDataBase64": b64(f"T={GH}")})]
    assert _fields("lt-no-secrets-in-userdata", only_b64) == [("lc", "userDataBase64")]
