"""Fail closed on unknowns: one value unknown at preview makes only the resource that holds it undecided.

For every stack policy: the resource with the unknown is listed (with the field path) and every other resource
is still judged; `unknowns: block` turns the undecided resource into a violation carrying UNDECIDED_MARK,
`warn` raises one UndecidedError (the engine's advisory "can't run policy" diagnostic) after the decided
violations were reported. Resource policies: `block` reports, `warn` keeps the engine's diagnostic.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, resource_messages, stack_messages
from gpucloud.policies.gpucloud_policies.base import UNDECIDED_MARK, UndecidedError, UnknownValueError

BUCKET = "aws:s3/bucket:Bucket"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
POLICY = "aws:s3/bucketPolicy:BucketPolicy"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
NG = "aws:eks/nodeGroup:NodeGroup"
SUBNET = "aws:ec2/subnet:Subnet"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
BUDGET = "aws:budgets/budget:Budget"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
BLOCK = {"unknowns": "block"}
TLS_DENY = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*", '
    '"Resource": ["arn:aws:s3:::a", "arn:aws:s3:::a/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}'
)
TRAINING = {"gpucloud.io/workload": "training"}


def secure_bucket(name: str, bucket_name: Any, policy: Any = TLS_DENY) -> list[Res]:
    """A bucket with every S3 control attached by URN (how `bucket=b.id` links at preview)."""
    deps = {"bucket": [name]}
    sse = {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": UNKNOWN}}
    return [
        Res(BUCKET, name, {"bucket": bucket_name, "tags": {"Purpose": "checkpoints"}}),
        Res(
            PAB,
            f"{name}-pab",
            dict.fromkeys(("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"), True)
            | {"bucket": UNKNOWN},
            deps,
        ),
        Res(SSE, f"{name}-sse", {"bucket": UNKNOWN, "rules": [sse | {"bucketKeyEnabled": True}]}, deps),
        Res(POLICY, f"{name}-policy", {"bucket": UNKNOWN, "policy": policy}, deps),
        Res(VERSIONING, f"{name}-ver", {"bucket": UNKNOWN, "versioningConfiguration": {"status": "Enabled"}}, deps),
    ]


def undecided(policy: str, resources: list[Res], config: dict[str, Any] | None = None) -> tuple[set[str], list[Any]]:
    """(names reported as violations, the UndecidedError's entries) under unknowns 'warn'."""
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages(policy, resources, config, found)
    return {n for n, _ in found}, caught.value.undecided


def blocked(policy: str, resources: list[Res], config: dict[str, Any] | None = None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, message in stack_messages(policy, resources, {**(config or {}), **BLOCK}):
        out.setdefault(name, []).append(message)
    return out


S3_POLICIES = ("s3-public-access-block-explicit", "s3-sse-kms", "s3-tls-only", "checkpoint-bucket-versioning")


@pytest.mark.parametrize("policy", S3_POLICIES)
def test_a_computed_bucket_name_does_not_switch_off_the_check_for_an_insecure_neighbour(policy: str) -> None:
    resources = [*secure_bucket("computed", UNKNOWN), Res(BUCKET, "insecure", {"bucket": "ckpt-insecure"})]
    # The computed-name bucket is linked by URN, so it is decided (clean); the insecure one is flagged.
    assert {name for name, _ in stack_messages(policy, resources)} == {"insecure"}


def test_a_tls_policy_built_from_an_unknown_arn_leaves_the_buckets_after_it_judged() -> None:
    resources = [*secure_bucket("a-first", "a-first", policy=UNKNOWN), Res(BUCKET, "z-insecure", {"bucket": "z"})]
    reported, entries = undecided("s3-tls-only", resources)
    assert reported == {"z-insecure"}
    assert [(e.urn.rsplit("::", 1)[-1], e.field) for e in entries] == [("a-first", "a-first-policy.policy")]
    assert "string value at .policy can't be known during preview" in entries[0].reason
    messages = blocked("s3-tls-only", resources)
    assert set(messages) == {"a-first", "z-insecure"}
    assert messages["a-first"] == [
        f"a-first: {UNDECIDED_MARK}a-first-policy.policy): string value at .policy can't be known during "
        "preview. Fix: make the value known at preview (a literal, or derived from known inputs), or set this "
        "policy's unknowns to 'warn' for this environment."
    ]


def test_one_known_denying_document_decides_a_bucket_whose_other_document_is_unknown() -> None:
    resources = [
        *secure_bucket("b", "b"),
        Res(POLICY, "extra", {"bucket": UNKNOWN, "policy": UNKNOWN}, {"bucket": ["b"]}),
    ]
    assert stack_messages("s3-tls-only", resources) == []


def test_s3_policies_read_unknown_sub_resources_per_bucket() -> None:
    resources = [
        Res(BUCKET, "a", {"bucket": "a"}),
        Res(PAB, "a-pab", {"bucket": UNKNOWN, "blockPublicAcls": UNKNOWN}, {"bucket": ["a"]}),
        Res(SSE, "a-sse", {"bucket": UNKNOWN, "rules": UNKNOWN}, {"bucket": ["a"]}),
        Res(BUCKET, "b", {"bucket": "b"}),
    ]
    # b has no block at all: S3's default blocks it, so only the explicit-block policy reports it.
    reported, entries = undecided("s3-public-access-blocked", resources)
    assert reported == set() and [(e.field) for e in entries] == ["a-pab.blockPublicAcls"]
    assert {name for name, _ in stack_messages("s3-public-access-block-explicit", resources)} == {"b"}
    reported, entries = undecided("s3-sse-kms", resources)
    assert reported == {"b"} and [(e.field) for e in entries] == ["a-sse.rules"]


def test_checkpoint_bucket_with_unknown_tags_is_undecided_alone() -> None:
    resources = [
        Res(BUCKET, "tags-unknown", {"bucket": "data", "tags": UNKNOWN}),
        Res(BUCKET, "ckpt", {"bucket": "ckpt"}),
    ]
    reported, entries = undecided("checkpoint-bucket-versioning", resources)
    assert reported == {"ckpt"} and [e.field for e in entries] == ["tags"]


def p5_group(name: str, **props: Any) -> Res:
    return Res(NG, name, {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": 2}} | props)


def test_a_node_group_with_a_computed_instance_type_and_200_nodes_is_blocked_not_passed() -> None:
    resources = [
        Res(NG, "computed-type", {"instanceTypes": [UNKNOWN], "scalingConfig": {"maxSize": 200}}),
        p5_group("big", scalingConfig={"maxSize": 20}),
    ]
    reported, entries = undecided("gpu-count-cap", resources)
    assert reported == {"big"}
    assert [(e.urn.rsplit("::", 1)[-1], e.field) for e in entries] == [("computed-type", "instanceTypes.0")]
    messages = blocked("gpu-count-cap", resources)
    assert set(messages) == {"big", "computed-type"}
    assert UNDECIDED_MARK + "instanceTypes.0)" in messages["computed-type"][0]


def test_one_pool_with_a_computed_max_size_leaves_every_pool_policy_on_for_the_others() -> None:
    unknown_pool = p5_group("computed-max", scalingConfig={"maxSize": UNKNOWN}, labels=TRAINING, subnetIds=["s1"])
    over_cap = p5_group("over-cap", scalingConfig={"maxSize": 20}, labels=TRAINING, subnetIds=[UNKNOWN])
    resources = [unknown_pool, over_cap]
    assert undecided("gpu-count-cap", resources)[0] == {"over-cap"}
    # over-cap: multi-node training without any EFA interface; computed-max's size decides whether it is.
    reported, entries = undecided("efa-shape", resources)
    assert reported == {"over-cap"} and [e.field for e in entries] == ["scalingConfig.maxSize"]
    reported, entries = undecided("nonprod-spot-share", resources)
    assert reported == {"over-cap"} and [e.urn.rsplit("::", 1)[-1] for e in entries] == ["computed-max"]
    # spot-interruption-handling reads only the market fields: a pool of unknown size is still judged.
    spot = [
        p5_group("computed-max-spot", scalingConfig={"maxSize": UNKNOWN}, capacityType="SPOT"),
        p5_group("market-unknown", capacityType=UNKNOWN),
    ]
    reported, entries = undecided("spot-interruption-handling", spot)
    assert reported == {"computed-max-spot"} and [e.field for e in entries] == ["capacityType"]


def test_a_pool_on_literal_subnet_ids_is_undecided_alone_for_efa_shape() -> None:
    literal = p5_group("literal-subnets", labels=TRAINING, subnetIds=["subnet-0a", "subnet-0b"])
    cpu = Res(NG, "no-efa", {"instanceTypes": ["g6.12xlarge"], "scalingConfig": {"maxSize": 4}, "labels": TRAINING})
    reported, entries = undecided("efa-shape", [literal, cpu])
    assert reported == {"literal-subnets", "no-efa"}  # both lack EFA interfaces; the zones are what is unknown
    assert [(e.urn.rsplit("::", 1)[-1], e.field) for e in entries] == [("literal-subnets", "subnetIds")]


def test_fsx_locality_judges_each_file_system_on_its_own() -> None:
    resources = [
        Res(SUBNET, "a", {"availabilityZone": "us-east-1a"}),
        Res(SUBNET, "b", {"availabilityZone": "us-east-1b"}),
        Res(SUBNET, "c", {"availabilityZone": UNKNOWN}),
        Res(NG, "pool", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": 2}}, {"subnetIds": ["a"]}),
        Res(LUSTRE, "fs-far", {"subnetIds": [UNKNOWN]}, {"subnetIds": ["b"]}),
        Res(LUSTRE, "fs-unknown-az", {"subnetIds": [UNKNOWN]}, {"subnetIds": ["c"]}),
    ]
    reported, entries = undecided("fsx-same-az", resources)
    assert reported == {"fs-far"}
    assert [(e.urn.rsplit("::", 1)[-1], e.field) for e in entries] == [("fs-unknown-az", "availabilityZone")]


def test_a_stack_wide_unknown_is_undecided_for_the_stack() -> None:
    reported, entries = undecided("budget-and-anomaly", [Res(BUDGET, "b", {"budgetType": UNKNOWN})])
    assert reported == set() and [(e.urn, e.field) for e in entries] == [("", "budgetType")]
    assert blocked("budget-and-anomaly", [Res(BUDGET, "b", {"budgetType": UNKNOWN})]) == {
        "": [
            f"stack: {UNDECIDED_MARK}budgetType): string value at .budgetType can't be known during preview. "
            "Fix: make the value known at preview (a literal, or derived from known inputs), or set this policy's "
            "unknowns to 'warn' for this environment."
        ]
    }


def test_spend_cap_lists_what_the_cost_engine_could_not_price_for_an_unknown() -> None:
    cost = {
        "monthly_ceiling": 1000.0,
        "items": [],
        "unpriced": [
            {
                "urn": "urn:pulumi:test::test::aws:eks/nodeGroup:NodeGroup::ng",
                "reason": "scalingConfig.desiredSize/maxSize are unknown at preview",
            },
            {
                "urn": "urn:pulumi:test::test::aws:sqs/queue:Queue::q",
                "reason": "usage-billed: SQS is billed by requests",
            },
        ],
    }
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as caught:
        stack_messages("monthly-spend-cap", [], {"maxMonthlyUsd": 500}, found, cost=cost)
    reported, entries = {n for n, _ in found}, caught.value.undecided
    assert reported == {""}  # the decided part: 1000 > 500
    assert [(e.urn.rsplit("::", 1)[-1], e.field) for e in entries] == [("ng", "scalingConfig.desiredSize")]


def test_resource_policies_block_or_warn_per_resource() -> None:
    unknown_doc = Res(ROLE_POLICY, "inline", {"role": "r", "policy": UNKNOWN})
    with pytest.raises(UnknownValueError):
        resource_messages("iam-no-admin-star", unknown_doc)
    assert resource_messages("iam-no-admin-star", unknown_doc, BLOCK) == [
        f"inline: {UNDECIDED_MARK}policy): policy is computed, so what it grants is unknown at preview. Fix: make the "
        "value known at preview (a literal, or derived from known inputs), or set this policy's unknowns to "
        "'warn' for this environment."
    ]
    known = Res(
        ROLE_POLICY,
        "known",
        {"role": "r", "policy": '{"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}'},
    )
    assert resource_messages("iam-no-admin-star", known, BLOCK) == []


def test_without_a_stack_policy_run_an_unknown_still_propagates() -> None:
    from gpucloud.policies.gpucloud_policies.base import deciding, mark_undecided, unknown

    with pytest.raises(UnknownValueError), deciding("urn:x"):
        raise unknown("a")
    with pytest.raises(UnknownValueError) as caught:
        mark_undecided("urn:x", "subnetIds", "why")
    assert caught.value.props == ["subnetIds"] and caught.value.message == "why"


# A guardrail built here (not the registry's, which is built once at import) exercises the wrappers themselves.
def _stack_guardrail() -> Any:
    from gpucloud.policies.gpucloud_policies.base import EnforcementLevel, Guardrail, Severity, deciding, get, text

    def check(args: Any, report: Any, cfg: Any) -> None:
        for r in args.resources:
            with deciding(r):
                if text(get(r.props, "state")) != "ok":
                    report(r.urn, "is not ok")
        if cfg.get("stackWide"):
            raise unknown_signal("stack.wide")

    from gpucloud.policies.gpucloud_policies.base import unknown as unknown_signal

    return Guardrail(
        id="GC-REL-099",
        name="demo-stack",
        description="d",
        category="reliability",
        severity=Severity.LOW,
        enforcement=EnforcementLevel.MANDATORY,
        remediation_steps="r",
        references=("x",),
        kind="stack",
        validate=check,
        config={"stackWide": {"type": "boolean", "default": False, "description": "raise outside deciding"}},
    )


def _run_stack(g: Any, states: dict[str, Any], config: dict[str, Any]) -> tuple[list[tuple[str, str]], Any]:
    from pulumi_policy import PolicyResource, StackValidationArgs
    from pulumi_policy.proxy import unknown_checking_proxy

    from gpucloud.guard.harness import options, urn

    resources = [
        PolicyResource("t:m:R", unknown_checking_proxy({"state": s}), urn("t:m:R", n), n, options(), None, None, [], {})
        for n, s in states.items()
    ]
    found: list[tuple[str, str]] = []
    policy = g.policy()
    error = None
    try:
        policy.validate(StackValidationArgs(resources, config), lambda m, u=None: found.append((u or "", m)))
    except UnknownValueError as exc:
        error = exc
    return found, error


def test_a_fresh_stack_guardrail_blocks_or_warns_per_resource() -> None:
    g = _stack_guardrail()
    assert g.defaults() == {"stackWide": False, "unknowns": "warn"}
    assert g.schema() is not None and g.schema().properties["unknowns"]["enum"] == ["block", "warn"]
    found, error = _run_stack(g, {"a": UNKNOWN, "b": "bad", "c": "ok"}, g.settings({}))
    assert [u.rsplit("::", 1)[-1] for u, _ in found] == ["b"] and found[0][1] == "b: is not ok"
    assert isinstance(error, UndecidedError)
    assert error.message == (
        "1 resource(s) could not be decided: a (state): string value at .state can't be known during preview"
    )
    assert error.props == ["state"]
    found, error = _run_stack(g, {"a": UNKNOWN, "b": "bad", "c": "ok"}, g.settings(BLOCK))
    assert error is None
    assert [(u.rsplit("::", 1)[-1], m.split(":", 1)[0]) for u, m in found] == [("b", "b"), ("a", "a")]
    assert found[1][1].startswith(f"a: {UNDECIDED_MARK}state): string value at .state")


def test_a_stack_wide_unknown_outside_deciding_is_the_stacks() -> None:
    g = _stack_guardrail()
    found, error = _run_stack(g, {"b": "bad"}, g.settings({"stackWide": True}))
    assert [m for _, m in found] == ["b: is not ok"]
    assert isinstance(error, UndecidedError) and [(u.urn, u.field) for u in error.undecided] == [("", "stack.wide")]
    assert error.message.startswith("1 resource(s) could not be decided: stack (stack.wide): ")
    found, error = _run_stack(g, {"b": "bad"}, g.settings({"stackWide": True, **BLOCK}))
    assert error is None and found[1][0] == "" and found[1][1].startswith(f"stack: {UNDECIDED_MARK}stack.wide): ")


def test_undecided_entries_are_listed_once_per_resource_and_field() -> None:
    from gpucloud.policies.gpucloud_policies.base import Undecided, settle

    twice = [Undecided("urn:a", "f", "why"), Undecided("urn:a", "f", "why"), Undecided("urn:b", "", "r")]
    reported: list[tuple[str, str]] = []
    settle(twice, lambda u, m: reported.append((u, m)), {"unknowns": "block"})
    assert [u for u, _ in reported] == ["urn:a", "urn:b"]
    assert reported[1][1].startswith(f"{UNDECIDED_MARK}stack): r. Fix: ")
    with pytest.raises(UndecidedError) as caught:
        settle(twice, lambda u, m: reported.append((u, m)), {"unknowns": "warn"})
    assert caught.value.message == "2 resource(s) could not be decided: urn:a (f): why; urn:b (stack): r"
    settle([], lambda u, m: reported.append((u, m)), {"unknowns": "block"})
    assert len(reported) == 2


def test_a_fresh_resource_guardrail_reports_undecided_under_block_only() -> None:
    from pulumi_policy import ResourceValidationArgs
    from pulumi_policy.proxy import unknown_checking_proxy

    from gpucloud.guard.harness import options
    from gpucloud.policies.gpucloud_policies.base import EnforcementLevel, Guardrail, Severity, get, text

    def check(args: Any, report: Any, cfg: Any) -> None:
        if text(get(args.props, "state")) != "ok":
            report("is not ok")

    g = Guardrail(
        id="GC-REL-098",
        name="demo-resource",
        description="d",
        category="reliability",
        severity=Severity.LOW,
        enforcement=EnforcementLevel.MANDATORY,
        remediation_steps="r",
        references=("x",),
        kind="resource",
        validate=check,
        resource_types=frozenset({"t:m:R"}),
    )

    def run(state: Any, config: dict[str, Any], type_: str = "t:m:R") -> list[str]:
        found: list[str] = []
        args = ResourceValidationArgs(
            type_, unknown_checking_proxy({"state": state}), "urn:x", "x", options(), None, config
        )
        g.policy().validate(args, lambda m, u=None: found.append(m))
        return found

    assert run("bad", {}) == ["x: is not ok"] and run("ok", {}) == [] and run("bad", {}, "t:m:Other") == []
    assert run(UNKNOWN, BLOCK) == [
        f"x: {UNDECIDED_MARK}state): string value at .state can't be known during preview. Fix: make the value "
        "known at preview (a literal, or derived from known inputs), or set this policy's unknowns to 'warn' for "
        "this environment."
    ]
    with pytest.raises(UnknownValueError):
        run(UNKNOWN, {})


def test_via_names_the_resource_that_holds_the_unknown() -> None:
    from gpucloud.policies.gpucloud_policies.base import unknown, via

    class R:
        name = "holder"

    with pytest.raises(UnknownValueError) as caught, via(R()):
        raise unknown("a.b")
    assert caught.value.props == ["holder", "a", "b"]
    with via(R()):
        pass


class _Provider:
    def __init__(self, type_: str, props: dict[str, Any]) -> None:
        from pulumi_policy.proxy import unknown_checking_proxy

        self.resource_type = type_
        self.props = unknown_checking_proxy(props)


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        (
            _Provider("pulumi:providers:aws", {"defaultTags": {"tags": {"Team": "vision", "Env": ""}}}),
            {"Team": "vision", "Env": ""},
        ),
        (_Provider("pulumi:providers:aws", {"defaultTags": '{"tags": {"Team": "vision"}}'}), {"Team": "vision"}),
        (_Provider("pulumi:providers:aws", {"defaultTags": "{not json"}), {}),
        (_Provider("pulumi:providers:aws", {"defaultTags": '["Team"]'}), {}),
        (_Provider("pulumi:providers:aws", {"region": "us-east-1"}), {}),
        (_Provider("pulumi:providers:kubernetes", {"defaultTags": {"tags": {"Team": "x"}}}), {}),
        (None, {}),
    ],
)
def test_provider_default_tags(provider: Any, expected: dict[str, str]) -> None:
    from gpucloud.policies.gpucloud_policies.base import provider_default_tags

    assert provider_default_tags(provider) == expected


def test_plain_copies_proxies_deeply_and_keeps_unknowns() -> None:
    from pulumi_policy.proxy import unknown_checking_proxy

    from gpucloud.policies.gpucloud_policies.base import plain

    props = unknown_checking_proxy({"a": [{"b": 1.0, "c": UNKNOWN}, "s"], "d": {"e": None}, "f": (1, 2)})
    copied = plain(props)
    assert copied == {"a": [{"b": 1.0, "c": UNKNOWN}, "s"], "d": {"e": None}, "f": [1, 2]}
    assert type(copied) is dict and type(copied["a"]) is list and type(copied["a"][0]) is dict
    assert plain("x") == "x" and plain(None) is None
