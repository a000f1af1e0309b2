"""The policy pack config file (`--policy-config`, the same JSON as `pulumi ... --policy-pack-config`).

Layering, as the Pulumi CLI does it: each policy's schema defaults, then the pack's initial config, then the
file. The file is keyed by policy name or "all"; a value is a level string or an object with an optional
``enforcementLevel`` plus config properties, validated against the policy's schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyConfigError(ValueError):
    """The policy config is invalid; the CLI reports it as invalid input (exit 2)."""


@dataclass(frozen=True)
class Effective:
    level: str
    config: dict[str, Any]


def _object_schema(properties: Mapping[str, Any]) -> dict[str, Any]:
    props = {k: dict(v) for k, v in properties.items()}
    props["enforcementLevel"] = {"enum": list(LEVELS)}
    # Stricter than the Pulumi CLI on purpose: a misspelt key would otherwise silently keep the default.
    return {"type": "object", "properties": props, "additionalProperties": False}


def validate_config(config: Any, guardrails: Mapping[str, Any], retired: Mapping[str, str] | None = None) -> list[str]:
    """Every problem in a pack config, each naming its key path and what is allowed; ``retired`` maps a policy
    name the pack no longer has to what replaced it, so an old config says where its entry went."""
    if not isinstance(config, Mapping):
        return ["the policy config must be a JSON object keyed by policy name (or 'all')"]
    problems = []
    for name, value in config.items():
        if name == "all":
            level = value.get("enforcementLevel") if isinstance(value, Mapping) else value
            extra = sorted(set(value) - {"enforcementLevel"}) if isinstance(value, Mapping) else []
            if level not in LEVELS or extra:
                problems.append(f'all: must be one of {list(LEVELS)} (or {{"enforcementLevel": ...}})')
            continue
        g = guardrails.get(name)
        if g is None and retired and name in retired:
            problems.append(f"{name}: {retired[name]}")
            continue
        if g is None:
            problems.append(f"{name}: no such policy in the pack (known: {', '.join(sorted(guardrails))})")
            continue
        if isinstance(value, str):
            if value not in LEVELS:
                problems.append(f"{name}: enforcement level {value!r} is not one of {list(LEVELS)}")
            continue
        problems.extend(f"{'.'.join([name, *path])}: {message}" for path, message in _entry_problems(g.config, value))
    return problems


def _entry_problems(properties: Mapping[str, Any], value: Any) -> list[tuple[tuple[str, ...], str]]:
    """(key path, message) of every schema error in one policy's entry, in key-path order."""
    value_key = frozen(value)
    if value_key is None:
        return _validated(_object_schema(properties), value)
    # Validation is a function of the schema and the entry alone, and jsonschema walks both every time (about
    # 2 ms per plan for the shipped prod config): the plans of one process judged with the same entries (`plan
    # --all`, a corpus, the tests) reuse the answer. The schema is known by identity (a guardrail's schema is
    # built with it and never changed; the memo holds it, so its id cannot pass to another object meanwhile).
    memo = _SCHEMAS.get(id(properties))
    if memo is None or memo.properties is not properties:
        if len(_SCHEMAS) >= _MEMO_LIMIT:
            # A long-lived process judging ever new schemas must not grow without bound; starting over is cheap.
            _SCHEMAS.clear()
        memo = _SCHEMAS[id(properties)] = _SchemaMemo(properties, _draft7(_object_schema(properties)))
    found = memo.problems.get(value_key)
    if found is None:
        if len(memo.problems) >= _MEMO_LIMIT:
            memo.problems.clear()
        found = memo.problems[value_key] = tuple(_validated(memo.validator, value))
    return list(found)


@dataclass
class _SchemaMemo:
    properties: Mapping[str, Any]
    validator: Any
    problems: dict[Any, tuple[tuple[tuple[str, ...], str], ...]] = field(default_factory=dict)


_SCHEMAS: dict[int, _SchemaMemo] = {}
_MEMO_LIMIT = 1024


def _draft7(schema: Mapping[str, Any]) -> Any:
    import jsonschema  # only a config with per-policy objects needs it (~40 ms of import)

    return jsonschema.Draft7Validator(schema)


def _validated(validator: Any, value: Any) -> list[tuple[tuple[str, ...], str]]:
    if isinstance(validator, Mapping):
        validator = _draft7(validator)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return [(tuple(str(p) for p in err.absolute_path), str(err.message)) for err in errors]


def frozen(value: Any) -> Any:
    """A hashable key equal only for values every validator treats alike: the type is part of it (JSON Schema
    tells an integer from a float and a list from a tuple by type), else None for what has no such key."""
    if value is None or type(value) in _SCALARS:
        return (type(value), value)
    if isinstance(value, Mapping):
        items = [(k, frozen(v)) for k, v in value.items()]
        if any(not isinstance(k, str) or v is None for k, v in items):
            return None
        return (type(value), tuple(sorted(items)))
    if isinstance(value, list | tuple):
        parts = [frozen(v) for v in value]
        return None if any(v is None for v in parts) else (type(value), tuple(parts))
    if isinstance(value, str | int | float):
        return (type(value), value)
    return None


_SCALARS = frozenset({str, int, float, bool})


def check_config(config: Any, guardrails: Mapping[str, Any], retired: Mapping[str, str] | None = None) -> None:
    problems = validate_config(config, guardrails, retired)
    if problems:
        raise PolicyConfigError("invalid policy config: " + "; ".join(problems))


def effective(
    guardrail: Any, default_level: str, given: Mapping[str, Any] | None, initial: Mapping[str, Any] | None
) -> Effective:
    """Level: the policy's entry, then "all", then the policy's default, then the pack's; config: defaults,
    initial config, file."""
    entry = (given or {}).get(guardrail.name)
    level: str | None = None
    if isinstance(entry, str):
        level = entry
    elif isinstance(entry, Mapping) and "enforcementLevel" in entry:
        level = str(entry["enforcementLevel"])
    elif given and "all" in given:
        everything = given["all"]
        level = str(everything.get("enforcementLevel") if isinstance(everything, Mapping) else everything)
    if level is None:
        level = guardrail.enforcement.value if guardrail.enforcement is not None else default_level
    merged = guardrail.defaults()
    for layer in ((initial or {}).get(guardrail.name), entry):
        if isinstance(layer, Mapping):
            merged.update({k: v for k, v in layer.items() if k != "enforcementLevel"})
    return Effective(level=level, config=merged)
