"""The Kubernetes OpenAPI schema of a cluster version (kubernetes-validate's copy) and the validators built from it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema._utils import equal as jsonschema_equal
from referencing import Registry, Resource

from gpucloud.conformance.k8s_schema.objects import _DEFS_ID, _SCHEMA_ROOT, KV_VERSION
from gpucloud.conformance.k8s_schema.structural import (
    _UPSTREAM_PATTERN,
    Convert,
    _structural_node,
    structural_to_jsonschema,
)


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:3])


@dataclass
class OpenAPISchemas:
    """The strict JSON schemas of one Kubernetes version, loaded once; one compiled validator per kind."""

    requested: str
    version: str  # the schema set used ("1.34.0"): the newest carried that is not newer than requested
    root: Path
    registry: Registry[Any]
    gvks: dict[tuple[str, str], str]  # (apiVersion, kind) -> definition name
    groups: set[str]
    fast: FastValidity
    _validators: dict[tuple[str, str], SchemaValidator] = field(default_factory=dict)

    @property
    def source(self) -> str:
        minor = ".".join(self.version.split(".")[:2])
        return f"Kubernetes {minor} OpenAPI (kubernetes-validate {KV_VERSION})"

    def is_builtin_group(self, api_version: str) -> bool:
        group = api_version.rpartition("/")[0]
        return group in self.groups

    def validator(self, api_version: str, kind: str) -> SchemaValidator | None:
        key = (api_version, kind)
        if key in self._validators:
            return self._validators[key]
        if key not in self.gvks:
            return None
        # kubernetes-validate's own file naming: the group's first label, then the version ("rbac-v1").
        short = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
        path = self.root / f"{kind.lower()}-{short}.json"
        fallback = {"$ref": f"{_DEFS_ID}#/$defs/{self.gvks[key]}"}
        schema = json.loads(path.read_text()) if path.is_file() else fallback
        validator = self.custom_validator(schema)
        self._validators[key] = validator
        return validator

    def custom_validator(self, schema: dict[str, Any]) -> SchemaValidator:
        try:
            fast: Predicate | None = self.fast.compile(schema)
        except _Unsupported:
            fast = None
        return SchemaValidator(lambda: jsonschema.Draft202012Validator(schema, registry=self.registry), fast)

    def structural_validator(self, tree: dict[str, Any]) -> SchemaValidator:
        """`custom_validator(structural_to_jsonschema(tree, root=True))`, converting only what is checked.

        A CRD's tree runs to thousands of nodes (prometheus-operator's PodSpec copies) of which an object
        touches a few: the fast check converts each node as it first compiles it, and the whole tree is
        converted only when an object fails and jsonschema has to say why.
        """
        try:
            fast: Predicate | None = self.fast._compile_node(_structural_node(tree, root=True), _structural_node)
        except _Unsupported:
            fast = None

        def slow() -> jsonschema.protocols.Validator:
            schema = structural_to_jsonschema(tree, root=True)
            return jsonschema.Draft202012Validator(schema, registry=self.registry)

        return SchemaValidator(slow, fast)


class _Unsupported(Exception):
    """A schema keyword the fast path does not implement: that schema is checked by jsonschema alone."""


_ANNOTATIONS = {
    "description",
    "format",
    "title",
    "default",
    "example",
    "$schema",
    "$id",
    "discriminator",
    _UPSTREAM_PATTERN,
}


def _is_type(name: str, x: Any) -> bool:
    # JSON Schema's types as jsonschema's 2020-12 type checker defines them (an integral float is an integer).
    if name == "object":
        return isinstance(x, dict)
    if name == "array":
        return isinstance(x, list)
    if name == "string":
        return isinstance(x, str)
    if name == "boolean":
        return isinstance(x, bool)
    if name == "null":
        return x is None
    if name == "integer":
        return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())
    if name == "number":
        return isinstance(x, int | float) and not isinstance(x, bool)
    raise _Unsupported(f"type {name}")


Predicate = Callable[[Any], bool]


class FastValidity:
    """An exact yes/no for the keywords Kubernetes schemas use, compiled once per schema node.

    jsonschema spends ~30 us per schema node on a valid object (evolving a validator, resolving each $ref):
    about 2 ms for a Deployment, half a second for a few hundred rendered objects. Almost every object is
    valid, so this predicate answers "valid?" first, and only an object it rejects goes through jsonschema,
    whose errors are the ones reported. A schema with any keyword not implemented here raises _Unsupported
    and is left to jsonschema entirely, so the fast path never decides anything jsonschema would not.

    Property, item and map-value schemas compile on first use: a CRD's tree runs to thousands of nodes
    (prometheus-operator's PodSpec copies) of which an object touches a few; _Unsupported may then surface
    while checking, and SchemaValidator falls back to jsonschema for that schema from then on.
    """

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self._defs = defs
        self._refs: dict[str, Predicate] = {}

    def compile(self, node: Any, convert: Convert | None = None) -> Predicate:
        """The predicate of a schema node; `convert` turns each node of the tree into JSON Schema on first use.

        A CRD's structural schema is converted node by node this way (the `$ref`s the conversion adds point at
        the built-in definitions, which are JSON Schema already and compile as they are).
        """
        return self._compile_node(convert(node) if convert is not None else node, convert)

    def _compile_node(self, node: Any, convert: Convert | None) -> Predicate:
        if node is True or node == {}:
            return _always
        if node is False:
            return _never
        if not isinstance(node, dict):
            raise _Unsupported(repr(node)[:40])
        checks: list[Predicate] = []
        for key, value in node.items():
            if key in _ANNOTATIONS or key.startswith("x-kubernetes-"):
                continue
            checks.append(self._keyword(key, value, node, convert))
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        return lambda x: all(c(x) for c in checks)

    def _lazy(self, node: Any, convert: Convert | None) -> Predicate:
        cell: list[Predicate] = []

        def check(x: Any) -> bool:
            if not cell:
                cell.append(self.compile(node, convert))
            return cell[0](x)

        return check

    def _ref(self, ref: str) -> Predicate:
        name = ref.rpartition("/$defs/")[2]
        if "/$defs/" not in ref or name not in self._defs:
            raise _Unsupported(ref)
        if name not in self._refs:
            cell: list[Predicate] = []
            self._refs[name] = lambda x: cell[0](x)
            cell.append(self.compile(self._defs[name]))
        return self._refs[name]

    def _keyword(self, key: str, value: Any, node: Mapping[str, Any], convert: Convert | None) -> Predicate:
        if key == "$ref" and isinstance(value, str):
            return self._ref(value)
        if key == "type":
            names = [value] if isinstance(value, str) else list(value)
            for n in names:
                _is_type(n, None)  # raises on a type name it does not know
            return lambda x: any(_is_type(n, x) for n in names)
        if key == "properties" and isinstance(value, dict):
            props = {k: self._lazy(v, convert) for k, v in value.items()}
            return lambda x: not isinstance(x, dict) or all(props[k](x[k]) for k in props.keys() & x.keys())
        if key == "additionalProperties":
            if "patternProperties" in node:
                raise _Unsupported("patternProperties")
            known = set(node.get("properties") or {})
            if value is False:
                return lambda x: not isinstance(x, dict) or x.keys() <= known
            extra = self._lazy(value, convert)
            return lambda x: not isinstance(x, dict) or all(extra(v) for k, v in x.items() if k not in known)
        if key == "required" and isinstance(value, list):
            need = list(value)
            return lambda x: not isinstance(x, dict) or all(k in x for k in need)
        if key == "items" and isinstance(value, dict):
            item = self._lazy(value, convert)
            return lambda x: not isinstance(x, list) or all(item(v) for v in x)
        if key == "enum" and isinstance(value, list):
            allowed = list(value)
            return lambda x: any(jsonschema_equal(x, e) for e in allowed)
        if key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
            subs = [self.compile(v, convert) for v in value]
            if key == "oneOf":
                return lambda x: sum(1 for s in subs if s(x)) == 1
            if key == "anyOf":
                return lambda x: any(s(x) for s in subs)
            return lambda x: all(s(x) for s in subs)
        if key == "not":
            sub = self.compile(value, convert)
            return lambda x: not sub(x)
        if key == "pattern" and isinstance(value, str):
            try:
                rx = re.compile(value)
            except re.error:
                raise _Unsupported(f"pattern {value}") from None
            return lambda x: not isinstance(x, str) or rx.search(x) is not None
        if key in _BOUNDS and isinstance(value, int | float) and not isinstance(value, bool):
            return _BOUNDS[key](value)
        raise _Unsupported(key)


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False


def _num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


_BOUNDS: dict[str, Callable[[Any], Predicate]] = {
    "minimum": lambda b: lambda x: not _num(x) or x >= b,
    "maximum": lambda b: lambda x: not _num(x) or x <= b,
    "exclusiveMinimum": lambda b: lambda x: not _num(x) or x > b,
    "exclusiveMaximum": lambda b: lambda x: not _num(x) or x < b,
    "minLength": lambda b: lambda x: not isinstance(x, str) or len(x) >= b,
    "maxLength": lambda b: lambda x: not isinstance(x, str) or len(x) <= b,
    "minItems": lambda b: lambda x: not isinstance(x, list) or len(x) >= b,
    "maxItems": lambda b: lambda x: not isinstance(x, list) or len(x) <= b,
    "minProperties": lambda b: lambda x: not isinstance(x, dict) or len(x) >= b,
    "maxProperties": lambda b: lambda x: not isinstance(x, dict) or len(x) <= b,
}


class SchemaValidator:
    """jsonschema's validator for the errors, with the fast validity check in front when the schema allows.

    The jsonschema validator (and the schema it needs) is built on first use: almost every object passes the
    fast check, so for most schemas it never is.
    """

    def __init__(self, slow: Callable[[], jsonschema.protocols.Validator], fast: Predicate | None) -> None:
        self._slow_factory = slow
        self._slow: jsonschema.protocols.Validator | None = None
        self.fast = fast

    @property
    def slow(self) -> jsonschema.protocols.Validator:
        if self._slow is None:
            self._slow = self._slow_factory()
        return self._slow

    def iter_errors(self, instance: Any) -> Iterator[jsonschema.ValidationError]:
        if self.fast is not None:
            try:
                if self.fast(instance):
                    return iter(())
            except _Unsupported:
                self.fast = None
        return self.slow.iter_errors(instance)


def carried_versions() -> list[str]:
    return sorted(
        {m.group(1) for p in _SCHEMA_ROOT.iterdir() if (m := re.match(r"^v([\d.]+)-local-strict$", p.name))},
        key=_version_key,
    )


@cache
def openapi_schemas(kubernetes_version: str) -> OpenAPISchemas:
    """The schema set for a cluster version; raises LookupError when kubernetes-validate carries none that old."""
    wanted = _version_key(kubernetes_version)[:2]
    usable = [v for v in carried_versions() if _version_key(v)[:2] <= wanted]
    if not usable:
        raise LookupError(
            f"kubernetes-validate {KV_VERSION} carries no schema for Kubernetes {kubernetes_version} "
            f"(it has {', '.join(carried_versions())})"
        )
    version = usable[-1]
    root = _SCHEMA_ROOT / f"v{version}-local-strict"
    defs = json.loads((root / "_definitions.json").read_text())
    registry: Registry[Any] = Resource.from_contents(defs) @ Registry()
    gvks: dict[tuple[str, str], str] = {}
    for name, definition in defs.get("$defs", {}).items():
        for gvk in definition.get("x-kubernetes-group-version-kind") or []:
            group, version_, kind = gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")
            gvks[(f"{group}/{version_}" if group else version_, kind)] = name
    groups = {av.rpartition("/")[0] for av, _ in gvks}
    return OpenAPISchemas(
        kubernetes_version, version, root, registry, gvks, groups, FastValidity(defs.get("$defs", {}))
    )
