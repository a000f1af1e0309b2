"""The policy config's validation is remembered per (schema, entry): the same answers as jsonschema, computed once."""

from __future__ import annotations

import jsonschema
import pytest

from gpucloud.guard import config as config_module
from gpucloud.guard.config import validate_config
from gpucloud.policies.gpucloud_policies import by_name


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every entry jsonschema is asked to validate, with the memo emptied first."""
    monkeypatch.setattr(config_module, "_SCHEMAS", {})
    seen: list[object] = []
    iter_errors = jsonschema.Draft7Validator.iter_errors

    def counting(self: jsonschema.Draft7Validator, instance: object, *args: object, **kwargs: object) -> object:
        seen.append(instance)
        return iter_errors(self, instance, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft7Validator, "iter_errors", counting)
    return seen


def test_the_same_entry_is_validated_once_and_answered_alike(counted: list[object]) -> None:
    config = {"gpu-count-cap": {"maxGpusPerPool": -1, "typo": 3}, "gpu-family-allowlist": "mandatory"}
    expected = [
        "gpu-count-cap: Additional properties are not allowed ('typo' was unexpected)",
        "gpu-count-cap.maxGpusPerPool: -1 is less than the minimum of 0",
    ]
    assert validate_config(config, by_name()) == expected
    assert validate_config(dict(config), by_name()) == expected
    assert counted == [{"maxGpusPerPool": -1, "typo": 3}]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"maxGpusPerPool": 1}, None),
        # JSON Schema's integer is not a boolean, though True == 1 in Python: the memo must not share their answers.
        ({"maxGpusPerPool": True}, "gpu-count-cap.maxGpusPerPool: True is not of type 'integer'"),
        ({"maxGpusPerPool": 1.5}, "gpu-count-cap.maxGpusPerPool: 1.5 is not of type 'integer'"),
    ],
)
def test_equal_python_values_of_other_json_types_are_told_apart(
    counted: list[object], entry: dict[str, object], problem: str | None
) -> None:
    validate_config({"gpu-count-cap": {"maxGpusPerPool": 1}}, by_name())
    assert validate_config({"gpu-count-cap": entry}, by_name()) == ([problem] if problem else [])


def test_a_tuple_is_not_an_array_even_after_the_list() -> None:
    families = ["g6e", "p5"]
    assert validate_config({"gpu-family-allowlist": {"allowedFamilies": families}}, by_name()) == []
    assert validate_config({"gpu-family-allowlist": {"allowedFamilies": tuple(families)}}, by_name()) == [
        "gpu-family-allowlist.allowedFamilies: ('g6e', 'p5') is not of type 'array'"
    ]


def test_an_entry_without_a_key_is_validated_every_time(counted: list[object]) -> None:
    odd = {"maxGpusPerPool": object()}
    for _ in range(2):
        [problem] = validate_config({"gpu-count-cap": odd}, by_name())
        assert problem.startswith("gpu-count-cap.maxGpusPerPool: <object object at ")
    assert counted == [odd, odd]


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch, counted: list[object]) -> None:
    monkeypatch.setattr(config_module, "_MEMO_LIMIT", 3)
    for cap in range(5):
        validate_config({"gpu-count-cap": {"maxGpusPerPool": cap}}, by_name())
    [memo] = config_module._SCHEMAS.values()
    assert len(memo.problems) <= 3
    assert len(counted) == 5
    # Forgotten answers are computed again, and still right.
    assert validate_config({"gpu-count-cap": {"maxGpusPerPool": -1}}, by_name()) == [
        "gpu-count-cap.maxGpusPerPool: -1 is less than the minimum of 0"
    ]


def test_another_schema_object_is_validated_against_itself(counted: list[object]) -> None:
    class Guardrail:
        def __init__(self, minimum: int) -> None:
            self.config = {"cap": {"type": "integer", "minimum": minimum}}

    entry = {"p": {"cap": 5}}
    assert validate_config(entry, {"p": Guardrail(0)}) == []
    assert validate_config(entry, {"p": Guardrail(10)}) == ["p.cap: 5 is less than the minimum of 10"]
