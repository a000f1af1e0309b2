"""Kueue manager configuration check ("kueue.config"): every key and value type Kueue itself would accept.

Kueue reads its Configuration (the chart's `managerConfig.controllerManagerConfigYaml`, rendered into the
`<release>-manager-config` ConfigMap) with a strict decoder (`serializer.EnableStrict` in kueue's
pkg/config/config.go): an unknown or misspelt key, or a value of the wrong type, stops the controller at start-up,
after `pulumi up` has succeeded. This check decodes the rendered configuration against the Configuration API types
of the pinned Kueue version, read from upstream's Go source (apis/config/v1beta2/configuration_types.go, vendored
as the lock artifact `kueue-config-api`): struct fields by their json tags (inline embeddings merged), Go kinds
mapped to YAML kinds, and the typed string constants of a type as its allowed values. Types from other
packages (metav1.LabelSelector, corev1.ResourceList, component-base's LeaderElectionConfiguration, ...) are
accepted as objects without looking inside; metav1.Duration must be a duration string.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from gpucloud.charts.lock import artifact
from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import objects

CHECK = "kueue.config"
ARTIFACT = "kueue-config-api"
API_VERSION = "config.kueue.x-k8s.io/v1beta2"
CONFIG_KEY = "controller_manager_config.yaml"

_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.M | re.S)
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([^\s`]+)\s+`json:\"([^\"]*)\"`", re.M)
_NAMED = re.compile(r"^type (\w+) (?:= )?(\w+)$", re.M)
_CONST = re.compile(r"^\s*(?:const\s+)?\w+\s+(\w+)\s+=\s+\"([^\"]*)\"", re.M)
# Go's time.ParseDuration units, which metav1.Duration's JSON form uses ("10m", "1h30m", "500ms").
_DURATION = re.compile(r"^-?(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+$|^0$")
_INTS = frozenset({"int", "int8", "int16", "int32", "int64", "uint", "uint16", "uint32", "uint64"})


@dataclass(frozen=True)
class Api:
    """The Configuration API: struct name -> {json field: Go type}, and string type -> allowed constants."""

    version: str
    structs: dict[str, dict[str, str]]
    enums: dict[str, frozenset[str]]
    aliases: dict[str, str]


def parse_api(sources: list[str], version: str) -> Api:
    """Structs, aliases and typed string constants of Go source files (the subset the config API uses)."""
    raw: dict[str, list[tuple[str | None, str, str]]] = {}
    aliases: dict[str, str] = {}
    enums: dict[str, set[str]] = {}
    for text in sources:
        text = re.sub(r"//[^\n]*", "", text)
        for m in _STRUCT.finditer(text):
            raw[m[1]] = [(f[1], f[2], f[3]) for f in _FIELD.finditer(m[2])]
        for m in _NAMED.finditer(text):
            aliases[m[1]] = m[2]
        for m in _CONST.finditer(text):
            enums.setdefault(m[1], set()).add(m[2])

    def fields(name: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for go_name, go_type, tag in raw[name]:
            json_name = tag.split(",")[0]
            if ",inline" in tag or (go_name is None and not json_name):
                embedded = go_type.lstrip("*")
                if embedded in raw:
                    out.update(fields(embedded))
                # metav1.TypeMeta: apiVersion and kind.
                elif embedded.endswith("TypeMeta"):
                    out.update({"apiVersion": "string", "kind": "string"})
                continue
            if json_name and json_name != "-":
                out[json_name] = go_type
        return out

    return Api(
        version=version,
        structs={name: fields(name) for name in raw},
        enums={k: frozenset(v) for k, v in enums.items()},
        aliases=aliases,
    )


@functools.cache
def pinned_api() -> Api:
    pin = artifact(ARTIFACT)
    files = sorted(pin.artifact_dir.glob("*.go"))
    return parse_api([f.read_text() for f in files], pin.version)


def _kind(value: Any) -> str:
    """What a YAML value is, with its article, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def validate(api: Api, value: Any, go_type: str = "Configuration", path: str = "") -> Iterator[tuple[str, str, str]]:
    """(field path, what is wrong, what the API expects) for every departure of `value` from `go_type`."""
    go_type = go_type.lstrip("*")
    if value is None:  # YAML null: Go's decoder leaves the zero value
        return
    if go_type.startswith("[]"):
        if not isinstance(value, list):
            yield path, f"is {_kind(value)}", f"a list of {go_type[2:]}"
            return
        for i, item in enumerate(value):
            yield from validate(api, item, go_type[2:], f"{path}[{i}]")
        return
    if go_type.startswith("map["):
        if not isinstance(value, dict):
            yield path, f"is {_kind(value)}", f"a mapping ({go_type})"
            return
        element = go_type[go_type.index("]") + 1 :]
        for key, item in value.items():
            yield from validate(api, item, element, f"{path}.{key}" if path else str(key))
        return
    if go_type in api.structs:
        if not isinstance(value, dict):
            yield path, f"is {_kind(value)}", f"a mapping ({go_type})"
            return
        fields = api.structs[go_type]
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in fields:
                close = ", ".join(sorted(fields))
                yield where, f"is not a field of {go_type}", f"one of: {close}"
                continue
            yield from validate(api, item, fields[key], where)
        return
    base = go_type
    while base in api.aliases and api.aliases[base] != base:
        if api.aliases[base] in api.structs:
            yield from validate(api, value, api.aliases[base], path)
            return
        base = api.aliases[base]
    if go_type in api.enums:
        if value not in api.enums[go_type]:
            yield path, f"is {value!r}", f"one of {', '.join(sorted(api.enums[go_type]))} ({go_type})"
        return
    yield from _scalar(value, base, go_type, path)


def _scalar(value: Any, base: str, go_type: str, path: str) -> Iterator[tuple[str, str, str]]:
    if base == "string" or go_type.endswith(("ResourceName", "QualifiedName")):
        if not isinstance(value, str):
            yield path, f"is {_kind(value)}", f"a string ({go_type})"
    elif base == "bool":
        if not isinstance(value, bool):
            yield path, f"is {_kind(value)}", "true or false"
    elif base in _INTS or go_type == "time.Duration":
        if isinstance(value, bool) or not isinstance(value, int):
            yield path, f"is {_kind(value)}", f"an integer ({go_type})"
    elif base in ("float32", "float64"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            yield path, f"is {_kind(value)}", f"a number ({go_type})"
    elif go_type == "metav1.Duration" and (not isinstance(value, str) or not _DURATION.match(value)):
        yield path, f"is {value!r}", 'a duration string such as "10m" or "1h30m" (metav1.Duration)'
    # Any other type lives in another package (metav1.LabelSelector, corev1.ResourceList, component-base's
    # LeaderElectionConfiguration, ...): accepted unseen rather than judged on a guess.


@register_check(CHECK)
def check(ctx: ConformanceContext) -> Iterator[Finding]:
    api = pinned_api()
    source = f"Kueue {api.version} Configuration API (apis/config/v1beta2/configuration_types.go, strict decoding)"
    for obj in objects(ctx):
        if obj.kind != "ConfigMap":
            continue
        text = (obj.manifest.get("data") or {}).get(CONFIG_KEY)
        if not isinstance(text, str):
            continue
        try:
            config = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            yield Finding(
                CHECK, "error", obj.urn, f"data.{CONFIG_KEY}", f"is not YAML: {exc}", "a YAML mapping", source
            )
            continue
        if not isinstance(config, dict) or not str(config.get("apiVersion", "")).startswith("config.kueue.x-k8s.io/"):
            continue
        ref = f"{obj.api_version}/{obj.kind} {obj.namespace}/{obj.name}"
        if config.get("apiVersion") != API_VERSION or config.get("kind") != "Configuration":
            yield Finding(
                CHECK,
                "warning",
                obj.urn,
                f"data.{CONFIG_KEY}.apiVersion",
                f"is {config.get('apiVersion')!r} kind {config.get('kind')!r}; only {API_VERSION} is checked",
                f"apiVersion {API_VERSION}, kind Configuration",
                source,
                ref,
            )
            continue
        for field, problem, expected in validate(api, config):
            yield Finding(
                CHECK,
                "error",
                obj.urn,
                f"data.{CONFIG_KEY}.{field}",
                f"{field} {problem}: Kueue's strict decoder rejects the configuration and the controller does not "
                "start",
                expected,
                source,
                ref,
            )
