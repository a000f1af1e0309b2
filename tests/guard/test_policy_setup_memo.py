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
