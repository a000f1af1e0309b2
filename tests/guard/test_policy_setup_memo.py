"""Each policy's level and config are worked out once per (pack, config) in a process that judges many plans: the
same verdicts as working them out per plan, and a config that differs in any way a validator could tell is new."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

import gpucloud.guard as guard
from gpucloud.guard import PolicyConfigError, evaluate_plan
from gpucloud.plan import run_callable


def _plan() -> Any:
    def build() -> None:
        import pulumi_aws as aws

        aws.ec2.LaunchTemplate("lt", instance_type="g6e.xlarge")

    return run_callable(build, preview=False)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every config the pack's levels were worked out for, with the memo emptied first."""
    monkeypatch.setattr(guard, "_SETUPS", {})
    seen: list[Any] = []
    real = guard.check_config

    def counting(config: Any, *args: Any) -> None:
        seen.append(config)
        real(config, *args)

    monkeypatch.setattr(guard, "check_config", counting)
    return seen


def test_an_equal_config_is_worked_out_once_with_the_same_verdicts(checks: list[Any]) -> None:
    plan = _plan()
    config = {"all": "advisory", "lt-imdsv2": {"enforcementLevel": "mandatory"}}
    first = evaluate_plan(plan, config)
    again = evaluate_plan(plan, {"lt-imdsv2": {"enforcementLevel": "mandatory"}, "all": "advisory"} | {})
    same = evaluate_plan(plan, dict(config))
    assert first == same
    assert {v["policy"] for v in first["violations"] if v["enforcement"] == "mandatory"} == {"lt-imdsv2"}
    # The second spelling lists the keys in another order: a new key, worked out again, the same answer.
    assert again["violations"] == first["violations"]
    assert len(checks) == 2


@pytest.mark.parametrize(
    ("one", "other", "refused"),
    [
        ({"lt-imds-hop-limit": {"maxHopLimit": 1}}, {"lt-imds-hop-limit": {"maxHopLimit": True}}, True),
        # JSON Schema takes 1.0 as an integer: valid, but a policy reads the value it was given, so not shared.
        ({"lt-imds-hop-limit": {"maxHopLimit": 1}}, {"lt-imds-hop-limit": {"maxHopLimit": 1.0}}, False),
        (
            {"gpu-family-allowlist": {"allowedFamilies": ["g6e"]}},
            {"gpu-family-allowlist": {"allowedFamilies": ("g6e",)}},
            True,
        ),
    ],
)
def test_values_that_differ_only_in_type_are_not_shared(checks: list[Any], one: Any, other: Any, refused: bool) -> None:
    """True == 1 == 1.0 in Python, and a tuple holds a list's items: the memo tells them apart, as the validator
    and the policies reading the value do."""
    plan = _plan()
    evaluate_plan(plan, one)
    if refused:
        with pytest.raises(PolicyConfigError, match="is not of type"):
            evaluate_plan(plan, other)
    else:
        evaluate_plan(plan, other)
    assert len(checks) == 2


def test_an_invalid_config_is_refused_every_time(checks: list[Any]) -> None:
    plan = _plan()
    for _ in range(2):
        with pytest.raises(PolicyConfigError, match="no such policy"):
            evaluate_plan(plan, {"no-such-policy": "mandatory"})
    assert len(checks) == 2


def test_a_config_pickle_refuses_still_evaluates_each_time_alike(checks: list[Any]) -> None:
    plan = _plan()
    lock = threading.Lock()  # not picklable: the config falls back to frozen()'s key
    config = {"all": "advisory", "cost-tags": {"enforcementLevel": "mandatory", "x": lock}}
    with pytest.raises(PolicyConfigError, match="cost-tags"):
        evaluate_plan(plan, config)
    assert guard._config_key({"all": "advisory"}) == guard._config_key({"all": "advisory"})
    assert guard._config_key({"a": [lock]}) is None  # frozen() has no key for it either: never memoised
    evaluate_plan(plan, None)
    evaluate_plan(plan, None)
    assert len(checks) == 1  # no config: nothing to check, the levels worked out once


def test_a_changed_pack_is_worked_out_again(checks: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan()
    config = {"all": "advisory"}
    evaluate_plan(plan, config)
    pack = guard.load_pack()
    original = pack.by_name()
    replaced = dict(original)
    name = "lt-imdsv2"
    replaced[name] = dataclasses.replace(original[name])  # an equal guardrail, a new object
    monkeypatch.setattr(type(pack), "by_name", staticmethod(lambda: replaced))
    evaluate_plan(plan, config)
    assert len(checks) == 2


@pytest.fixture
def worked_out(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every policy whose level was worked out (one entry per policy per setup), with the memo emptied first."""
    monkeypatch.setattr(guard, "_SETUPS", {})
    seen: list[str] = []
    real = guard.effective

    def counting(g: Any, *args: Any) -> Any:
        seen.append(g.name)
        return real(g, *args)

    monkeypatch.setattr(guard, "effective", counting)
    return seen


def test_no_config_is_worked_out_once_too(worked_out: list[str]) -> None:
    plan = _plan()
    evaluate_plan(plan, None)
    once = len(worked_out)
    evaluate_plan(plan, None)
    assert once == len(guard.load_pack().by_name()) and len(worked_out) == once


def test_an_entry_for_another_pack_or_other_guardrails_is_not_used(worked_out: list[str]) -> None:
    """The memo is keyed by ids; an entry whose pack or guardrails are other objects (ids reused) is ignored."""
    pack = guard.load_pack()
    guardrails = pack.by_name()
    config = {"all": "advisory"}
    key = (id(pack), tuple(map(id, guardrails.values())), guard._config_key(config))
    fake = {"lt-imdsv2": "never handed out"}
    guard._SETUPS[key] = (object(), tuple(guardrails.values()), fake)
    assert guard._policy_setup(pack, guardrails, config) is not fake
    others = tuple(dataclasses.replace(g) for g in guardrails.values())
    guard._SETUPS[key] = (pack, others, fake)
    assert guard._policy_setup(pack, guardrails, config) is not fake
    setup = guard._policy_setup(pack, guardrails, config)
    assert setup["lt-imdsv2"].level == "advisory" and guard._SETUPS[key][2] is setup


def test_the_memo_is_bounded(worked_out: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard, "_SETUPS_LIMIT", 2)
    plan = _plan()
    for level in ("advisory", "mandatory", "disabled", "advisory"):
        evaluate_plan(plan, {"all": level})
        assert len(guard._SETUPS) <= 2
    assert worked_out.count("lt-imdsv2") == 4  # the first config was dropped when the memo filled


def test_a_retired_policy_name_says_where_its_entry_went(checks: list[Any]) -> None:
    with pytest.raises(PolicyConfigError, match="lb-internal-only: retired: folded into k8s-no-public-load-balancer"):
        evaluate_plan(_plan(), {"lb-internal-only": "mandatory"})


def test_a_config_pickle_refuses_is_keyed_by_its_frozen_form() -> None:
    from types import MappingProxyType

    from gpucloud.guard.config import frozen

    config = {"cost-tags": MappingProxyType({"enforcementLevel": "advisory"})}
    assert guard._config_key(config) == frozen(config) != frozen({"cost-tags": {"enforcementLevel": "mandatory"}})
    assert guard._config_key(config) is not None


def test_levels_and_config_layer_as_the_engine_layers_them_for_any_pack(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pack without RETIRED and a policy without a level of its own: the pack default level, then schema
    defaults, the pack's initial config and the file, in that order."""
    monkeypatch.setattr(guard, "_SETUPS", {})

    @dataclasses.dataclass(frozen=True)
    class Rule:
        name: str
        enforcement: Any = None
        config: Any = dataclasses.field(default_factory=lambda: {"x": {"type": "integer"}, "y": {"type": "integer"}})

        def defaults(self) -> dict[str, Any]:
            return {"x": 1, "y": 1}

    class Pack:
        @staticmethod
        def initial_config() -> dict[str, Any]:
            return {"p": {"x": 2, "y": 2}}

    pack, guardrails = Pack(), {"p": Rule("p")}
    setup = guard._policy_setup(pack, guardrails, {"p": {"y": 3}})
    assert (setup["p"].level, setup["p"].config) == (guard.PACK_DEFAULT_LEVEL, {"x": 2, "y": 3})
    assert guard._policy_setup(pack, guardrails, None)["p"].config == {"x": 2, "y": 2}
    with pytest.raises(PolicyConfigError, match="q: no such policy in the pack"):
        guard._policy_setup(pack, guardrails, {"q": "advisory"})
