"""gpucloud.guard's plumbing held to exact values: the resource options and providers a policy is handed,
the links between plan resources, how a "cannot be decided" message is read back, what a remediation changed,
and how awaitables and a missing cost engine are handled."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pulumi_policy import PolicyResource

import gpucloud.guard as guard
from gpucloud.guard.harness import UNKNOWN
from gpucloud.plan.model import Plan, ResourceRecord

URN = "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::b"
PROVIDER_URN = "urn:pulumi:dev::proj::pulumi:providers:aws::east"
MARK = "cannot be decided at preview (unknown: "


def record(name: str, type_: str = "aws:s3/bucket:Bucket", **kw: Any) -> ResourceRecord:
    urn = f"urn:pulumi:dev::proj::{type_}::{name}"
    base: dict[str, Any] = {"parent": None, "custom": True, "dependencies": [], "inputs": {}}
    return ResourceRecord(urn=urn, type=type_, name=name, **(base | kw))


def test_plan_resource_options_carry_the_record() -> None:
    r = record("b", protect=True, retain_on_delete=True, ignore_changes=["tags"], parent="urn:parent")
    opts = guard.PlanResourceOptions(r)
    assert (opts.protect, opts.ignore_changes, opts.parent, opts.retain_on_delete) == (
        True,
        ["tags"],
        "urn:parent",
        True,
    )
    assert (opts.aliases, opts.additional_secret_outputs, opts.delete_before_replace) == ([], [], None)
    timeouts = opts.custom_timeouts
    assert (timeouts.create_seconds, timeouts.update_seconds, timeouts.delete_seconds) == (0, 0, 0)
    plain = guard.PlanResourceOptions(record("c"))
    assert (plain.protect, plain.ignore_changes, plain.parent, plain.retain_on_delete) == (False, [], None, False)


def test_run_awaitable_runs_coroutines_on_a_fresh_loop_and_passes_values_through() -> None:
    async def answer() -> int:
        return 42

    assert guard.run_awaitable(answer()) == 42
    assert guard.run_awaitable(7) == 7
    assert guard.run_awaitable(None) is None
    # A fresh loop each time: the caller's (closed or running) loop is never reused.
    loop = asyncio.new_event_loop()
    loop.close()
    asyncio.set_event_loop(loop)
    try:
        assert guard.run_awaitable(answer()) == 42
    finally:
        asyncio.set_event_loop(None)


@pytest.mark.parametrize(
    ("message", "mark", "expected"),
    [
        (f"b: {MARK}a-pab.flag): value unknown. Fix: make it known.", MARK, ("a-pab.flag", "value unknown")),
        (f"{MARK}x): y. Fix: z", MARK, ("x", "y")),
        # The field after the mark is read, not one that appears before it.
        (f"(unknown: early): no. Fix: b: {MARK}late): yes. Fix: z", MARK, ("late", "yes")),
        # The first mark wins when the text repeats it.
        (f"{MARK}one): a. Fix: {MARK}two): b. Fix: c", MARK, ("one", "a")),
        (f"b: {MARK}no fix here", MARK, ("", f"{MARK}no fix here")),
        ("b: a plain violation. Fix: do it.", MARK, None),
        (f"b: {MARK}x): y. Fix: z", None, None),
        (f"b: {MARK}x): y. Fix: z", "", None),
    ],
)
def test_undecided_field_reads_the_field_and_reason(message: str, mark: str | None, expected: Any) -> None:
    assert guard._undecided_field(message, mark) == expected


def test_changes_lists_only_what_a_remediation_set_and_redacts_secrets() -> None:
    before = {"keep": 1, "change": "old", "nested": {"a": 1}}
    after = {"keep": 1, "change": "new", "nested": {"a": 2}, "added": True}
    assert guard._changes(before, after, set()) == {"change": "new", "nested": {"a": 2}, "added": True}
    assert guard._changes(before, dict(before), set()) == {}
    assert guard._changes(before, {**after, "userData": "token=hunter2"}, {"hunter2"}) == {
        "change": "new",
        "nested": {"a": 2},
        "added": True,
        "userData": "token=[secret]",
    }
    # Values JSON cannot hold are written as text before redaction.
    assert guard._changes({}, {"when": frozenset({"hunter2"})}, {"hunter2"}) == {"when": "frozenset({'[secret]'})"}


def test_providers_explicit_default_and_none() -> None:
    explicit = record(
        "east", "pulumi:providers:aws", inputs={"region": "us-east-1", "defaultTags": {"tags": {"T": "1"}}}
    )
    with_id = record("b", provider=f"{PROVIDER_URN}::0a1b-id")
    without_id = record("c", provider=PROVIDER_URN)
    default = record("d")
    k8s = record("ns", "kubernetes:core/v1:Namespace")
    plan = Plan(
        project="proj",
        stack="dev",
        resources=[explicit, with_id, without_id, default, k8s],
        config={"aws:region": "eu-west-1", "aws:defaultTags": '{"tags": {"Env": "dev"}}', "kubernetes:context": "k"},
    )
    provider_of = guard._providers(plan)
    assert provider_of(explicit) is None
    for r in (with_id, without_id):
        p = provider_of(r)
        assert p is not None
        assert (p.resource_type, p.urn, p.name) == ("pulumi:providers:aws", PROVIDER_URN, "east")
        assert p.props["region"] == "us-east-1" and p.props["defaultTags"]["tags"]["T"] == "1"
    d = provider_of(default)
    assert d is not None
    assert (d.resource_type, d.urn, d.name) == (
        "pulumi:providers:aws",
        "urn:pulumi:dev::proj::pulumi:providers:aws::default",
        "default",
    )
    assert dict(d.props) == {"region": "eu-west-1", "defaultTags": '{"tags": {"Env": "dev"}}'}
    assert provider_of(default) is d
    k = provider_of(k8s)
    assert k is not None
    assert (k.resource_type, k.urn, dict(k.props)) == (
        "pulumi:providers:kubernetes",
        "urn:pulumi:dev::proj::pulumi:providers:kubernetes::default",
        {"context": "k"},
    )
    # A provider reference that names no resource of the plan falls back to the package default.
    stray = record("e", provider="urn:pulumi:dev::proj::pulumi:providers:aws::gone::id")
    assert provider_of(stray) is d


def test_link_sets_parent_dependencies_and_property_dependencies_by_urn() -> None:
    vpc = record("vpc", "aws:ec2/vpc:Vpc")
    child = record(
        "sub",
        "aws:ec2/subnet:Subnet",
        parent=vpc.urn,
        dependencies=[vpc.urn, "urn:not-in-plan"],
        property_dependencies={"vpcId": [vpc.urn, "urn:not-in-plan"], "other": []},
    )
    orphan = record("lone", parent="urn:not-in-plan")
    plan = Plan(project="proj", stack="dev", resources=[vpc, child, orphan])
    prs = [PolicyResource(r.type, {}, r.urn, r.name, None, None, None, [], {}) for r in plan.resources]  # type: ignore[arg-type]
    guard._link(plan, prs)
    v, s, o = prs
    assert v.parent is None and v.dependencies == [] and v.property_dependencies == {}
    assert s.parent is v and s.dependencies == [v]
    assert s.property_dependencies == {"vpcId": [v], "other": []}
    assert o.parent is None


# ------------------------------------------------------------------ evaluate() with a pack whose policies are known


class _Guardrail:
    def __init__(self, name: str, level: str, severity: str) -> None:
        from pulumi_policy import EnforcementLevel

        self.name = name
        self.enforcement = EnforcementLevel(level)
        self.severity = type("S", (), {"value": severity})()

    def defaults(self) -> dict[str, Any]:
        return {"limit": 1}


class _Pack:
    """Every path through evaluate(): reports (plain, with a secret, with the undecided mark, with a urn),
    unknowns in resource and stack policies, remediation (and an unknown in it), a disabled policy, derived
    objects handed through the pack's scope."""

    PACK_NAME = "double"
    UNDECIDED_MARK = MARK
    seen: dict[str, Any] = {}

    def __init__(self) -> None:
        from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy
        from pulumi_policy.proxy import UnknownValueError

        seen = self.seen = {"configs": [], "derived": [], "stack_props": [], "args": [], "costs": [], "stack": []}
        levels = {"res": "mandatory", "adv": "advisory", "fix": "remediate", "off": "disabled", "stk": "mandatory"}
        self._guardrails = {n: _Guardrail(n, lvl, f"sev-{n}") for n, lvl in levels.items()}

        def res(args: Any, report: Any) -> None:
            seen["configs"].append(args.get_config())
            seen["args"].append((args.urn, args.opts.protect, args.provider.urn))
            if args.name == "u":
                raise UnknownValueError(UNKNOWN, ["a", "b"])
            report(f"{args.name}: leaks {args.props['token']}" if "token" in args.props else f"{args.name}: bad")

        def adv(args: Any, report: Any) -> None:
            if args.name == "b":
                report(f"b: {MARK}b.policy): value unknown. Fix: know it.")

        def fix_validate(args: Any, report: Any) -> None:
            if args.props.get("fixed") is not True:
                report(f"{args.name}: not fixed")

        def fix(args: Any) -> Any:
            if args.name == "u":
                raise UnknownValueError(UNKNOWN, ["c"])
            return {**args.props, "fixed": True, "note": f"was {args.props['token']}"} if args.name == "b" else None

        async def stk(args: Any, report: Any) -> None:
            seen["derived"].append(_Pack.objects)
            seen["stack_props"].append(sorted(r.name for r in args.resources))
            first = args.resources[0]
            seen["stack"].append(
                (args.get_config(), first.props["fixed"], first.opts.protect, first.provider.urn, first.dependencies)
            )
            report("stack: whole", None)
            report("b: one", args.resources[0].urn)
            exc = UnknownValueError(UNKNOWN, ["p"])
            exc.undecided = [  # type: ignore[attr-defined]
                type("U", (), {"urn": args.resources[1].urn, "field": "f.g", "reason": "r1"})(),
                type("U", (), {"urn": "", "field": "", "reason": "r2"})(),
            ]
            raise exc

        self._policies = [
            ResourceValidationPolicy("res", "d", res),
            ResourceValidationPolicy("adv", "d", adv),
            ResourceValidationPolicy("fix", "d", fix_validate, remediate=fix),
            ResourceValidationPolicy("off", "d", res),
            StackValidationPolicy("stk", "d", stk),
        ]

    objects: Any = None

    def by_name(self) -> dict[str, Any]:
        return self._guardrails

    def initial_config(self) -> dict[str, Any]:
        return {"res": {"limit": 2}}

    def policies(self, cost: Any = "not passed") -> list[Any]:
        self.seen["costs"].append(cost)
        return self._policies

    @staticmethod
    def derived_objects(objects: Any) -> Any:
        import contextlib

        @contextlib.contextmanager
        def scope() -> Any:
            _Pack.objects = objects
            try:
                yield
            finally:
                _Pack.objects = None

        return scope()


@pytest.fixture
def double_pack() -> Any:
    from gpucloud.guard import packs

    pack = _Pack()
    packs.register(pack)
    try:
        yield pack
    finally:
        packs.unregister(pack)


def _double_plan() -> Plan:
    from gpucloud.plan.model import SECRET

    b = record("b", inputs={"token": SECRET}, secret_inputs={"token": "hunter2"}, protect=True)
    u = record("u", inputs={"size": 1})
    plan = Plan(project="proj", stack="dev", resources=[b, u])
    plan.derived = [type("D", (), {"owner": b.urn, "source": "chart x@1", "manifest": {"kind": "Pod"}})()]
    return plan


def test_evaluate_reports_every_path_exactly(double_pack: Any) -> None:
    plan = _double_plan()
    b, u = (r.urn for r in plan.resources)
    stack = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"
    out = guard.evaluate(plan)
    assert out.violations == [
        {"policy": "res", "enforcement": "mandatory", "severity": "sev-res", "urn": b, "message": "b: leaks [secret]"},
        {
            "policy": "adv",
            "enforcement": "advisory",
            "severity": "sev-adv",
            "urn": b,
            "message": f"b: {MARK}b.policy): value unknown. Fix: know it.",
            "undecided": {"field": "b.policy", "reason": "value unknown"},
        },
        # Its remediation could not run at preview, so the remediate policy's own check fires (mandatory).
        {"policy": "fix", "enforcement": "mandatory", "severity": "sev-fix", "urn": u, "message": "u: not fixed"},
        {"policy": "stk", "enforcement": "mandatory", "severity": "sev-stk", "urn": stack, "message": "stack: whole"},
        {"policy": "stk", "enforcement": "mandatory", "severity": "sev-stk", "urn": b, "message": "b: one"},
    ]
    reason = "can't run policy '{}' from policy pack 'double' during preview: "
    assert [(n["policy"], n["urn"], n["reason"].startswith(reason.format(n["policy"]))) for n in out.not_evaluated] == [
        ("fix", u, False),
        ("res", u, True),
        ("stk", stack, True),
    ]
    assert out.not_evaluated[0]["reason"].startswith("can't run remediation 'fix' during preview: ")
    assert out.undecided == [
        {"policy": "adv", "urn": b, "field": "b.policy", "reason": "value unknown", "action": "block"}
        | {"enforcement": "advisory"},
        {"policy": "res", "urn": u, "field": "a.b", "reason": out.not_evaluated[1]["reason"].split(": ", 1)[1]}
        | {"action": "warn", "enforcement": "advisory"},
        {"policy": "stk", "urn": u, "field": "f.g", "reason": "r1", "action": "warn", "enforcement": "advisory"},
        {"policy": "stk", "urn": stack, "field": "", "reason": "r2", "action": "warn", "enforcement": "advisory"},
    ]
    fixed = {"token": "hunter2", "fixed": True, "note": "was hunter2"}
    assert out.remediations == [{"policy": "fix", "urn": b, "properties": fixed}]
    assert out.remediation_changes == [{"policy": "fix", "urn": b, "changes": {"fixed": True, "note": "was [secret]"}}]
    default_aws = "urn:pulumi:dev::proj::pulumi:providers:aws::default"
    assert double_pack.seen["args"] == [(b, True, default_aws), (u, False, default_aws)]
    assert double_pack.seen["stack"] == [({"limit": 1}, True, True, default_aws, [])]
    assert double_pack.seen["costs"] == ["not passed"]
    # Three enabled resource policies on two resources, one stack policy; the disabled one never runs.
    assert out.checks == 7
    assert double_pack.seen["configs"] == [{"limit": 2}, {"limit": 2}]
    assert double_pack.seen["derived"] == [[(b, "chart x@1", {"kind": "Pod"})]]
    assert double_pack.seen["stack_props"] == [["b", "u"]]
    assert _Pack.objects is None
    section = out.section("double")
    assert section["mandatory_violations"] == 4 and section["pack"] == "double"
    assert section["remediations"] is out.remediation_changes and section["undecided"] is out.undecided


def test_evaluate_levels_come_from_the_config(double_pack: Any) -> None:
    plan = _double_plan()
    out = guard.evaluate(plan, {"res": "disabled", "adv": "mandatory", "stk": "disabled", "fix": "remediate"})
    assert [(v["policy"], v["enforcement"], v["urn"].rsplit("::", 1)[-1]) for v in out.violations] == [
        ("adv", "mandatory", "b"),
        ("fix", "mandatory", "u"),
    ]


def test_evaluate_plan_hands_the_priced_plan_to_the_pack(double_pack: Any) -> None:
    cost = {"monthly_ceiling": 1.0, "items": []}
    plan = _double_plan()
    plan.derived = []
    section = guard.evaluate_plan(plan, cost=cost)
    assert section["pack"] == "double"
    assert double_pack.seen["costs"] == [cost]
    # No rendered objects: the pack's scope gets None, not an empty list.
    assert double_pack.seen["derived"] == [None]


def test_evaluate_a_pack_without_mark_scope_or_levels(double_pack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # An older pack: no UNDECIDED_MARK (nothing is read back as undecided), no derived_objects scope, and a
    # policy without a level of its own gets the library's default, advisory.
    monkeypatch.delattr(_Pack, "UNDECIDED_MARK")
    monkeypatch.delattr(_Pack, "derived_objects")
    double_pack._guardrails["res"].enforcement = None
    plan = _double_plan()
    plan.derived = []
    out = guard.evaluate(plan)
    assert [(v["policy"], v["enforcement"]) for v in out.violations[:2]] == [("res", "advisory"), ("adv", "advisory")]
    assert "undecided" not in out.violations[1]
    assert [u["action"] for u in out.undecided] == ["warn", "warn", "warn"]
    assert double_pack.seen["derived"] == [None]
