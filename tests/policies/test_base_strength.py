"""The guardrail model and readers of policies/gpucloud_policies/base.py, value by value.

Each test pins the exact result a reader or wrapper gives for one shape the engine can send (proxies, unknown
sentinels, strings for booleans and numbers, negative indexes, URNs), so a flipped comparison, a dropped branch
or a changed constant in base.py fails here (issue 13: mutation score of the policy modules).
"""

from __future__ import annotations

import contextlib
from collections import UserList
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest
from pulumi_policy import (
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_BOOLEAN_VALUE, UNKNOWN_STRING_VALUE, unknown_checking_proxy

from gpucloud.guard.harness import options
from gpucloud.policies.gpucloud_policies import base
from gpucloud.policies.gpucloud_policies.base import (
    UNDECIDED_MARK,
    UNKNOWNS_SCHEMA,
    EnforcementLevel,
    Guardrail,
    Severity,
    Undecided,
    UndecidedError,
    UnknownValueError,
)

UNKNOWN = UNKNOWN_STRING_VALUE
URN = "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::logs"
FIX = (
    ". Fix: make the value known at preview (a literal, or derived from known inputs), or set this policy's "
    "unknowns to 'warn' for this environment."
)


@contextlib.contextmanager
def collecting() -> Iterator[list[Undecided]]:
    """The collector a stack policy run installs, so `deciding` records instead of raising."""
    found: list[Undecided] = []
    token = base._UNDECIDED.set(found)
    try:
        yield found
    finally:
        base._UNDECIDED.reset(token)


def guardrail(kind: str = "stack", **kw: Any) -> Guardrail:
    fields: dict[str, Any] = {
        "id": "GC-REL-097",
        "name": "strength-demo",
        "description": "demo description",
        "category": "reliability",
        "severity": Severity.HIGH,
        "enforcement": EnforcementLevel.ADVISORY,
        "remediation_steps": "do the thing",
        "references": ("ref-a", "ref-b"),
        "kind": kind,
        "validate": lambda *a: None,
        "resource_types": frozenset({"t:m:R"}),
    }
    return Guardrail(**{**fields, **kw})


def resource_args(props: dict[str, Any], config: dict[str, Any], type_: str = "t:m:R") -> ResourceValidationArgs:
    return ResourceValidationArgs(type_, unknown_checking_proxy(props), URN, "logs", options(), None, config)


def stack_resource(name: str, props: dict[str, Any]) -> PolicyResource:
    urn = f"urn:pulumi:dev::proj::t:m:R::{name}"
    return PolicyResource("t:m:R", unknown_checking_proxy(props), urn, name, options(), None, None, [], {})


# ---------------------------------------------------------------------------------------------------------
# Guardrail


def test_unknowns_setting_is_added_only_when_the_policy_has_none() -> None:
    assert guardrail(config={"x": {"type": "string"}}).config == {"x": {"type": "string"}, "unknowns": UNKNOWNS_SCHEMA}
    own = {"enum": ["block", "warn"], "default": "block"}
    assert guardrail(config={"unknowns": own}).config == {"unknowns": own}


def test_defaults_skip_entries_without_a_default_and_settings_drop_enforcement_level() -> None:
    g = guardrail(config={"x": {"type": "string"}, "n": {"type": "integer", "default": 3}})
    assert g.defaults() == {"n": 3, "unknowns": "warn"}
    assert g.settings(None) == {"n": 3, "unknowns": "warn"}
    assert g.settings({"enforcementLevel": "disabled", "n": 7, "x": "y"}) == {"n": 7, "unknowns": "warn", "x": "y"}


def test_with_cost_binds_the_priced_plan_or_returns_the_same_guardrail() -> None:
    plain_g = guardrail()
    assert plain_g.with_cost({"items": []}) is plain_g
    seen: list[Any] = []

    def bind(cost: Any) -> Any:
        seen.append(cost)
        return "bound-validate"

    g = guardrail(bind_cost=bind)
    bound = g.with_cost({"monthly_ceiling": 9.0})
    assert seen == [{"monthly_ceiling": 9.0}]
    assert bound.validate == "bound-validate" and bound.id == "GC-REL-097" and g.validate != "bound-validate"


def test_schema_lists_every_config_property() -> None:
    schema = guardrail(config={"n": {"type": "integer", "default": 3}}).schema()
    assert schema is not None
    assert schema.properties == {"n": {"type": "integer", "default": 3}, "unknowns": dict(UNKNOWNS_SCHEMA)}


def test_policy_objects_carry_the_guardrail_metadata() -> None:
    stack = guardrail().policy()
    assert isinstance(stack, StackValidationPolicy)
    assert stack.name == "strength-demo"
    assert stack.description == "demo description"
    assert stack.enforcement_level == EnforcementLevel.ADVISORY
    assert stack.severity == Severity.HIGH
    assert stack.remediation_steps == "do the thing"
    assert stack.tags == ["reliability", "GC-REL-097", "ref-a", "ref-b"]
    assert stack.display_name == "GC-REL-097 strength-demo"
    assert stack.config_schema is not None and set(stack.config_schema.properties) == {"unknowns"}
    resource = guardrail("resource").policy()
    assert isinstance(resource, ResourceValidationPolicy)
    assert resource.remediate(resource_args({}, {})) is None
    assert resource.has_remediation() is False


def test_resource_validator_remembers_inputs_and_passes_args_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_INPUTS", {})
    seen: list[Any] = []

    def check(args: Any, report: Any, cfg: Any) -> None:
        seen.append((args.name, cfg))
        report(f"n is {cfg['n']}")

    g = guardrail("resource", validate=check, config={"n": {"type": "integer", "default": 3}})
    found: list[str] = []
    args = resource_args({"a": "x"}, {"n": 5, "enforcementLevel": "mandatory"})
    g.policy().validate(args, lambda m, u=None: found.append(m))
    assert seen == [("logs", {"n": 5, "unknowns": "warn"})]
    assert found == ["logs: n is 5"]
    assert base._INPUTS == {URN: {"a": "x"}}
    # Another type: not checked, but its inputs are still remembered for the stack policies.
    other = resource_args({"b": "y"}, {}, "t:m:Other")
    g.policy().validate(other, lambda m, u=None: found.append(m))
    assert len(seen) == 1 and base._INPUTS == {URN: {"b": "y"}}


def test_resource_remediator_passes_args_and_settings_and_skips_other_types() -> None:
    def fix(args: Any, cfg: Any) -> dict[str, Any]:
        return {"name": args.name, "n": cfg["n"]}

    g = guardrail("resource", remediate=fix, config={"n": {"type": "integer", "default": 3}})
    policy = g.policy()
    assert isinstance(policy, ResourceValidationPolicy) and policy.has_remediation()
    assert policy.remediate(resource_args({}, {"n": 4})) == {"name": "logs", "n": 4}
    assert policy.remediate(resource_args({}, {})) == {"name": "logs", "n": 3}
    assert policy.remediate(resource_args({}, {"n": 4}, "t:m:Other")) is None


def test_stack_validator_reports_names_and_urns_and_merges_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_INPUTS", {})
    seen: list[Any] = []

    def check(args: Any, report: Any, cfg: Any) -> None:
        for r in args.resources:
            seen.append((r.name, base.text(base.get(r.props, "state")), cfg["n"]))
            report(r.urn, "is seen")
        report("", "stack-wide")

    g = guardrail(validate=check, config={"n": {"type": "integer", "default": 3}})
    res = stack_resource("a", {"state": UNKNOWN})
    base.remember_inputs(res.urn, unknown_checking_proxy({"state": "from-input"}))
    found: list[tuple[str, Any]] = []
    g.policy().validate(StackValidationArgs([res], {"n": 8}), lambda m, u=None: found.append((m, u)))
    assert seen == [("a", "from-input", 8)]
    assert found == [("a: is seen", res.urn), ("stack: stack-wide", None)]
    assert base._UNDECIDED.get() is None


def test_stack_validator_lists_an_unknown_outside_deciding_with_its_reason() -> None:
    def check(args: Any, report: Any, cfg: Any) -> None:
        raise base.unknown("spec.size", "size is computed")

    g = guardrail(validate=check)
    with pytest.raises(UndecidedError) as caught:
        g.policy().validate(StackValidationArgs([], {}), lambda m, u=None: None)
    assert caught.value.undecided == [Undecided("", "spec.size", "size is computed")]
    assert caught.value.message == "1 resource(s) could not be decided: stack (spec.size): size is computed"
    found: list[tuple[str, Any]] = []
    g.policy().validate(StackValidationArgs([], {"unknowns": "block"}), lambda m, u=None: found.append((m, u)))
    assert found == [(f"stack: {UNDECIDED_MARK}spec.size): size is computed{FIX}", None)]


# ---------------------------------------------------------------------------------------------------------
# Inputs behind unknown outputs


def test_remember_inputs_keeps_the_plain_target_and_clears_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_INPUTS", {})
    monkeypatch.setattr(base, "_MAX_REMEMBERED", 2)
    base.remember_inputs("u1", unknown_checking_proxy({"a": "1"}))
    base.remember_inputs("u2", {"b": "2"})
    assert base._INPUTS == {"u1": {"a": "1"}, "u2": {"b": "2"}} and type(base._INPUTS["u1"]) is dict
    base.remember_inputs("u3", {"c": "3"})
    assert base._INPUTS == {"u3": {"c": "3"}}


def test_with_inputs_puts_back_inputs_for_wholly_unknown_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_INPUTS", {})
    # An input that is itself unknown stays unknown (read from the plain target, never raising here).
    base.remember_inputs("u", unknown_checking_proxy({"size": 4.0, "zone": UNKNOWN}))
    outputs = unknown_checking_proxy({"size": UNKNOWN, "zone": UNKNOWN, "arn": UNKNOWN, "name": "kept"})
    merged = base.with_inputs("u", outputs)
    assert merged["__target"] == {"size": 4.0, "zone": UNKNOWN, "name": "kept"}
    assert base.get(merged, "size") == 4.0
    plain = base.with_inputs("u", {"size": UNKNOWN, "name": "kept"})
    assert plain["__target"] == {"size": 4.0, "name": "kept"}
    known = unknown_checking_proxy({"size": 2.0})
    assert base.with_inputs("u", known) is known
    assert base.with_inputs("never-seen", outputs) is outputs
    base.remember_inputs("list", ["not", "a", "map"])
    assert base.with_inputs("list", outputs) is outputs


# ---------------------------------------------------------------------------------------------------------
# Readers


def test_has_and_get_walk_proxies_dicts_and_lists() -> None:
    props = unknown_checking_proxy({"a": {"b": [10.0, UNKNOWN, 30.0]}, "n": None, "u": UNKNOWN})
    assert base.has(props, "u") is True and base.has(props, "zz") is False
    assert base.has({"k": 1}, "k") is True and base.has({"k": 1}, "j") is False
    assert base.has(MappingProxyType({"k": 1}), "k") is True and base.has(MappingProxyType({}), "k") is False
    assert base.get(props, "a", "b", 0) == 10.0
    assert base.get(props, "a", "b", -1) == 30.0
    assert base.get(props, "a", "b", -3) == 10.0
    assert base.get(props, "a", "b", -4, default="d") == "d"
    assert base.get(props, "a", "b", 3, default="d") == "d"
    assert base.get(props, "a", "missing", default="d") == "d"
    assert base.get(props, "n", default="d") == "d"
    assert base.get({"a": 1}, 0, default="d") == "d"
    assert base.get([1, 2], "a", default="d") == "d"
    assert base.get({"a": 0}, "a", default="d") == 0
    with pytest.raises(UnknownValueError):
        base.get(props, "a", "b", 1)


def test_list_readers() -> None:
    assert base.is_list([1]) is True and base.is_list((1,)) is True
    assert base.is_list("ab") is False and base.is_list(b"ab") is False and base.is_list(5) is False
    assert base.items(unknown_checking_proxy({"l": ["a", "b"]})["l"]) == ["a", "b"]
    assert base.items("ab") == [] and base.items(None) == []
    assert base.maps([{"a": 1}, 2, "x", MappingProxyType({"b": 2})]) == [{"a": 1}, MappingProxyType({"b": 2})]
    assert base.strings("a") == ["a"] and base.strings(["a", 1, None, "b"]) == ["a", "b"] and base.strings(3) == []
    assert base.count([1, 2, 3]) == 3 and base.count("abc") == 0 and base.count(None) == 0
    assert base.count(unknown_checking_proxy({"l": [UNKNOWN, UNKNOWN]})["l"]) == 2


def test_truthy_and_falsy_read_launch_template_strings() -> None:
    assert [base.truthy(v) for v in (True, False, " TRUE ", "true", "false", "yes", 1, None)] == [
        True, False, True, True, False, False, False, False,
    ]  # fmt: skip
    assert [base.falsy(v) for v in (False, True, " False ", "false", "true", "no", 0, None)] == [
        True, False, True, True, False, False, False, False,
    ]  # fmt: skip


def test_number_integer_and_text() -> None:
    assert base.number(3) == 3.0 and type(base.number(3)) is float
    assert base.number(2.5) == 2.5 and base.number(" 2.5 ") == 2.5
    assert base.number(float("nan"), 7.0) == 7.0 and base.number(True, 7.0) == 7.0
    assert base.number("many", 7.0) == 7.0 and base.number([], 7.0) == 7.0 and base.number(None) is None
    assert base.integer(2.9) == 2 and base.integer("4") == 4 and base.integer(None, 6) == 6
    assert base.integer("inf", 6) == 6 and base.integer(float("-inf"), 6) == 6 and base.integer("x") is None
    assert base.text("a") == "a" and base.text(5) == "" and base.text(None, "d") == "d"


def test_plain_copies_mappings_and_sequences_of_every_kind() -> None:
    # Non-string keys: a dict keeps them (copied as is), another Mapping is read through keys() (strings only).
    assert base.plain({1: "a", "b": [1]}) == {1: "a", "b": [1]}
    assert base.plain(MappingProxyType({1: "a", "b": 2})) == {"b": 2}
    assert base.plain(UserList([1, {"c": UNKNOWN}])) == [1, {"c": UNKNOWN}]
    assert base.plain(range(2)) == [0, 1]
    assert base.plain(unknown_checking_proxy({"x": [UNKNOWN]})["__target"]["x"]) == [UNKNOWN]


def test_present_counts_unknown_as_set_and_empty_as_unset() -> None:
    props = unknown_checking_proxy({"arn": UNKNOWN, "empty": "", "none": None, "zero": 0})
    assert [base.present(props, k) for k in ("arn", "empty", "none", "zero", "missing")] == [
        True, False, False, True, False,
    ]  # fmt: skip
    assert base.present({"k": "v"}, "k") is True and base.present({"k": ""}, "k") is False
    assert base.present({}, "k") is False


def test_urn_name_and_type() -> None:
    assert base.urn_name(URN) == "logs"
    assert base.urn_name("urn:pulumi:dev::proj::a$b::x::y") == "y"
    assert base.urn_name("") == ""
    assert base.urn_type(URN) == "aws:s3/bucket:Bucket"
    assert base.urn_type("urn:pulumi:dev::proj::my:comp:Pool$aws:eks/nodeGroup:NodeGroup::ng") == (
        "aws:eks/nodeGroup:NodeGroup"
    )
    assert base.urn_type("urn:pulumi:dev::proj::a$b$c::x") == "c"
    assert base.urn_type("not-a-urn") == "" and base.urn_type("a::b::c") == ""


def test_unknown_carries_the_path_and_message() -> None:
    exc = base.unknown("spec.size")
    assert exc.props == ["spec", "size"] and exc.unknown_type_sentinel == UNKNOWN_BOOLEAN_VALUE
    assert exc.message == "boolean value at .spec.size can't be known during preview"
    assert base.unknown("a", "why").message == "why"


def test_tags_of_reads_strings_and_stringifies_the_rest() -> None:
    assert base.tags_of({"tags": {"Team": "ml", "Cost": 1.5}}) == {"Team": "ml", "Cost": "1.5"}
    assert base.tags_of({"tagsAll": {"A": "b"}}, "tagsAll") == {"A": "b"}
    assert base.tags_of({"tags": ["Team"]}) == {} and base.tags_of({}) == {}


def test_provider_default_tags_needs_props_on_an_aws_provider() -> None:
    class Bare:
        props = unknown_checking_proxy({"defaultTags": {"tags": {"T": "v"}}})

    assert base.provider_default_tags(Bare()) == {}


# ---------------------------------------------------------------------------------------------------------
# Fail closed


def test_undecided_error_lists_every_entry_and_points_at_the_first_field() -> None:
    exc = UndecidedError([Undecided("", "", "r1"), Undecided(URN, "a.b", "r2")])
    assert exc.props == []
    assert exc.undecided == [Undecided("", "", "r1"), Undecided(URN, "a.b", "r2")]
    assert exc.message == "2 resource(s) could not be decided: stack (stack): r1; logs (a.b): r2"
    assert UndecidedError([Undecided(URN, "a.b", "r"), Undecided("", "c", "s")]).props == ["a", "b"]


def test_deciding_records_the_resource_and_prefixed_field() -> None:
    res = stack_resource("a", {})
    with collecting() as found:
        for prefix, path in (("", "x.y"), ("tpl", "x.y"), ("tpl", "")):
            with base.deciding(res, prefix):
                raise UnknownValueError(UNKNOWN, path.split(".") if path else [])
        with base.deciding("urn:explicit"):
            raise base.unknown("f", "why")
        with base.deciding(res):
            pass
    assert [(u.urn, u.field) for u in found] == [
        (res.urn, "x.y"), (res.urn, "tpl.x.y"), (res.urn, "tpl"), ("urn:explicit", "f"),
    ]  # fmt: skip
    assert found[3].reason == "why"
    assert base.deciding(object()).urn == "" and base.deciding(res).prefix == ""


def test_deciding_lets_other_errors_through() -> None:
    with collecting() as found:
        with pytest.raises(ValueError), base.deciding("urn:x"):
            raise ValueError("bad")
        with pytest.raises(UndecidedError), base.deciding("urn:x"):
            raise UndecidedError([Undecided("u", "f", "r")])
    assert found == []


def test_via_prefixes_only_plain_unknowns() -> None:
    class R:
        name = "tpl"

    with pytest.raises(UnknownValueError) as caught, base.via(R()):
        raise UnknownValueError(UNKNOWN, ["a", "0"])
    assert caught.value.props == ["tpl", "a", "0"]
    with pytest.raises(UndecidedError) as undecided, base.via(R()):
        raise UndecidedError([Undecided("u", "f.g", "r")])
    assert undecided.value.props == ["f", "g"]
    with pytest.raises(ValueError) as other, base.via(R()):
        raise ValueError("bad")
    assert not hasattr(other.value, "props")
    # An unknown that carries no path at all is still named by the resource.
    bare = UnknownValueError(UNKNOWN, [])
    del bare.props
    with pytest.raises(UnknownValueError) as caught, base.via(R()):
        raise bare
    assert caught.value.props == ["tpl"]


def test_mark_undecided_and_field() -> None:
    with collecting() as found:
        base.mark_undecided("urn:a", "subnetIds", "zones unseen")
    assert found == [Undecided("urn:a", "subnetIds", "zones unseen")]
    assert base._field(UnknownValueError(UNKNOWN, ["a", "0"])) == "a.0"
    exc = UnknownValueError(UNKNOWN, [])
    exc.props = None  # type: ignore[assignment]
    assert base._field(exc) == ""
    del exc.props
    assert base._field(exc) == ""


def test_undecided_message_and_settle_under_block() -> None:
    assert base.undecided_message(Undecided("u", "", "r")) == f"{UNDECIDED_MARK}stack): r{FIX}"
    assert base.undecided_message(Undecided("u", "f", "r")) == f"{UNDECIDED_MARK}f): r{FIX}"
    reported: list[tuple[str, str]] = []
    base.settle([Undecided("u", "f", "r")], lambda u, m: reported.append((u, m)), {"unknowns": "block"})
    assert reported == [("u", f"{UNDECIDED_MARK}f): r{FIX}")]
