"""Policy pack config, the CLI's way: parsed like parsePolicyPackConfig and reconciled like
ReconcilePolicyPackConfig."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpucloud.guard.online.common import LEVELS, OnlineError, _level_name

# Policy pack config, the CLI's way


@dataclass
class PolicyConfig:
    """plugin.AnalyzerPolicyConfig: an enforcement level ("" when not given) and config properties."""

    enforcement_level: str = ""
    properties: dict[str, Any] | None = None


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    enforcement_level: str
    config_schema: dict[str, Any] | None
    policy_type: str
    severity: str


def policy_infos(info: Any) -> list[PolicyInfo]:
    """GetAnalyzerInfo's policies as the CLI converts them: ``enforcementLevel`` injected into every schema."""
    from google.protobuf import json_format
    from pulumi.runtime.proto import analyzer_pb2

    out = []
    for p in info.policies:
        schema: dict[str, Any] | None = None
        if info.supportsConfig:
            props = json_format.MessageToDict(p.configSchema.properties) if p.HasField("configSchema") else {}
            schema = {"properties": dict(props), "required": list(p.configSchema.required)}
            schema["properties"]["enforcementLevel"] = {"type": "string", "enum": list(LEVELS)}
        out.append(
            PolicyInfo(
                name=p.name,
                enforcement_level=_level_name(p.enforcementLevel),
                config_schema=schema,
                policy_type=analyzer_pb2.PolicyType.Name(p.policy_type),
                severity=analyzer_pb2.PolicySeverity.Name(p.severity),
            )
        )
    return sorted(out, key=lambda p: p.name)


def initial_config(info: Any) -> dict[str, PolicyConfig]:
    from google.protobuf import json_format

    out = {}
    for name, pc in info.initialConfig.items():
        out[name] = PolicyConfig(_level_name(pc.enforcementLevel), json_format.MessageToDict(pc.properties))
    return out


def parse_config_file(data: Any) -> dict[str, PolicyConfig]:
    """parsePolicyPackConfig: a level string or an object whose ``enforcementLevel`` is split off; an
    ``environments`` key is ESC's, not a policy's."""
    if not isinstance(data, Mapping):
        raise OnlineError("the policy pack config must be a JSON object")
    out: dict[str, PolicyConfig] = {}
    for key, value in data.items():
        if key == "environments":
            continue
        if isinstance(value, str):
            if value not in LEVELS:
                raise OnlineError(f"parsing enforcement level for {key!r}: {value!r} is not a valid enforcement level")
            out[key] = PolicyConfig(value, None)
        elif isinstance(value, Mapping):
            props = dict(value)
            level = props.pop("enforcementLevel", "")
            if level != "" and (not isinstance(level, str) or level not in LEVELS):
                raise OnlineError(f"parsing enforcement level for {key!r}: {level!r} is not a valid enforcement level")
            if level or props:
                out[key] = PolicyConfig(level, props or None)
        else:
            raise OnlineError(f"parsing {key!r}: {value!r} is not a valid value; must be a string or object")
    return out


def _apply(result: dict[str, PolicyConfig], given: Mapping[str, PolicyConfig]) -> None:
    everything = given.get("all")
    if everything is not None and everything.enforcement_level in LEVELS:
        for name, entry in result.items():
            result[name] = PolicyConfig(everything.enforcement_level, entry.properties)
    for name, entry in given.items():
        current = result.get(name, PolicyConfig())
        level = entry.enforcement_level if entry.enforcement_level in LEVELS else current.enforcement_level
        props = dict(current.properties) if current.properties is not None else None
        if entry.properties:
            props = {**(props or {}), **entry.properties}
        result[name] = PolicyConfig(level, props)


def reconcile_config(
    policies: Sequence[PolicyInfo], initial: Mapping[str, PolicyConfig], given: Mapping[str, PolicyConfig] | None
) -> tuple[dict[str, PolicyConfig], list[str]]:
    """ReconcilePolicyPackConfig: (the config sent to Configure, the validation errors that stop the CLI)."""
    import jsonschema

    result: dict[str, PolicyConfig] = {}
    for p in policies:
        defaults = {
            k: v["default"] for k, v in ((p.config_schema or {}).get("properties") or {}).items() if "default" in v
        }
        result[p.name] = PolicyConfig(p.enforcement_level, defaults or None)
    if initial:
        _apply(result, initial)
    if given:
        _apply(result, given)
    errors: list[str] = []
    for p in policies:
        if p.config_schema is None:
            continue
        schema: dict[str, Any] = {"type": "object"}
        if p.config_schema.get("properties"):
            schema["properties"] = p.config_schema["properties"]
        if p.config_schema.get("required"):
            schema["required"] = p.config_schema["required"]
        props = (result.get(p.name) or PolicyConfig()).properties or {}
        for err in jsonschema.Draft7Validator(schema).iter_errors(props):
            where = ".".join(str(x) for x in err.absolute_path) or "(root)"
            errors.append(f"{p.name}: {where}: {err.message}")
    return result, sorted(errors)
