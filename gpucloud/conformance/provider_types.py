"""The input types of the installed provider SDKs (pulumi-aws, pulumi-kubernetes), read from the SDKs themselves.

A type token (``aws:eks/nodeGroup:NodeGroup``) leads to its resource class through the resource-module registry
that each SDK's top-level ``__init__`` fills at import (``pulumi.runtime.get_resource_module``: the same table the
engine uses to rehydrate resources), the class to its ``<Resource>Args`` input type, and each input type to its
properties: the Pulumi (camelCase) name from ``@pulumi.getter(name=...)``, whether the annotation admits None
(required when it does not, as ``pulumi._types`` decides for its own translation) and the declared type, parsed
into an `InputType`. Nested ``...Args`` input types are parsed only when a value reaches them, and every parse is
cached for the life of the process.

This module knows nothing of the plan; `gpucloud.conformance.aws_inputs` validates recorded inputs against it.
"""

from __future__ import annotations

import collections.abc
import enum
import importlib
import sys
import types
import typing
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any, ForwardRef, Literal, Union

# JSON kinds an input may declare. "integer" is a number without a fraction; "object" is a nested input type,
# "map" a string-keyed mapping of one element type; "any" accepts everything (Any, assets, unresolvable types).
Kind = Literal["string", "number", "integer", "boolean", "array", "map", "object", "any", "union", "resource"]


@dataclass(frozen=True)
class InputType:
    kind: Kind
    items: InputType | None = None  # element type of an array or map
    cls: type | None = None  # the input type class of an "object"
    options: tuple[InputType, ...] = ()  # members of a "union"
    values: tuple[str, ...] = ()  # the only strings a Literal / Enum type admits (empty: any string)

    def describe(self) -> str:
        """The declared type as a short text: 'string', 'array of NodeGroupTaintArgs', 'map of string'."""
        if self.kind == "object" and self.cls is not None:
            return f"object {self.cls.__name__}"
        if self.kind in ("array", "map") and self.items is not None:
            return f"{self.kind} of {self.items.describe()}"
        if self.kind == "union":
            return " or ".join(o.describe() for o in self.options)
        if self.values:
            return "one of " + ", ".join(repr(v) for v in self.values)
        return self.kind


ANY = InputType("any")
_PRIMITIVES: dict[Any, InputType] = {
    str: InputType("string"),
    bool: InputType("boolean"),
    int: InputType("integer"),
    float: InputType("number"),
}


@dataclass(frozen=True)
class ObjectSchema:
    """One input type: its properties by Pulumi name, the required ones, and where it comes from."""

    name: str  # the class name, e.g. "NodeGroupScalingConfigArgs"
    package: str  # "pulumi-aws 7.51.1"
    props: dict[str, InputType]
    required: frozenset[str]

    @property
    def source(self) -> str:
        return f"{self.package} input type {self.name}"


@dataclass(frozen=True)
class ResourceSchema:
    token: str
    resource_class: type
    args: ObjectSchema
    # A Kubernetes API object (apiVersion + kind): the OpenAPI schema check validates those, more precisely.
    kubernetes_object: bool


def _package_label(module_name: str) -> str:
    top = module_name.partition(".")[0]
    dist = top.replace("_", "-")
    return f"{dist} {_dist_version(dist)}"


@cache
def _dist_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "(version unknown)"


def _resolve_name(ref: str, namespace: dict[str, Any]) -> Any:
    """A forward reference's target in the defining module (dotted for cross-package refs: '_meta.v1.X')."""
    head, *rest = ref.split(".")
    value = namespace.get(head)
    for part in rest:
        if value is None:
            return None
        value = getattr(value, part, None)
    return value


def _is_output_or_awaitable(arg: Any) -> bool:
    from pulumi import Output

    if isinstance(arg, ForwardRef):
        return arg.__forward_arg__.startswith("Output[")
    origin = typing.get_origin(arg)
    return arg is Output or origin is Output or origin in (collections.abc.Awaitable, typing.Awaitable)


def _is_typed_dict(arg: Any, namespace: dict[str, Any]) -> bool:
    # `Union['XArgs', 'XArgsDict']`: the TypedDict spelling of the same input type, not a second type.
    if isinstance(arg, ForwardRef):
        target = _resolve_name(arg.__forward_arg__, namespace)
        return target is not None and typing.is_typeddict(target)
    return typing.is_typeddict(arg)


def parse_hint(hint: Any, namespace: dict[str, Any]) -> InputType:
    """Turn one property annotation of a generated input type into an InputType (Input/Optional unwrapped)."""
    import pulumi
    from pulumi._types import is_input_type

    if isinstance(hint, str):
        hint = ForwardRef(hint)
    if isinstance(hint, ForwardRef):
        target = _resolve_name(hint.__forward_arg__, namespace)
        return ANY if target is None else parse_hint(target, namespace)
    if hint in _PRIMITIVES:
        return _PRIMITIVES[hint]
    if hint is Any or hint is object:
        return ANY
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or origin is types.UnionType:
        members: list[InputType] = []
        for arg in args:
            if arg is type(None) or _is_output_or_awaitable(arg) or _is_typed_dict(arg, namespace):
                continue
            parsed = parse_hint(arg, namespace)
            if parsed.kind == "any":
                return ANY
            if parsed not in members:
                members.append(parsed)
        if not members:
            return ANY
        if len(members) == 1:
            return members[0]
        # A plain string admits every value a string enum of the same union admits.
        if InputType("string") in members:
            members = [m for m in members if not (m.kind == "string" and m.values)]
        return members[0] if len(members) == 1 else InputType("union", options=tuple(members))
    if origin is Literal:
        if all(isinstance(a, str) for a in args):
            return InputType("string", values=tuple(args))
        return ANY
    if origin in (list, collections.abc.Sequence, typing.Sequence, collections.abc.MutableSequence):
        return InputType("array", items=parse_hint(args[0], namespace) if args else ANY)
    if origin in (dict, collections.abc.Mapping, typing.Mapping, collections.abc.MutableMapping):
        return InputType("map", items=parse_hint(args[1], namespace) if len(args) == 2 else ANY)
    if isinstance(hint, type):
        if is_input_type(hint):
            return InputType("object", cls=hint)
        if issubclass(hint, enum.Enum):
            values = tuple(str(m.value) for m in hint)
            return InputType("string", values=values) if issubclass(hint, str) else ANY
        if issubclass(hint, pulumi.Resource):
            return InputType("resource")  # sent as a resource reference; the plan shows its URN
    return ANY


def _required(hint: Any) -> bool:
    """As pulumi._types decides: a property is required when its annotation does not admit None."""
    if hint is None:
        return False
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return type(None) not in typing.get_args(hint)
    return True


@cache
def object_schema(cls: type) -> ObjectSchema:
    """The properties of a generated input type class (``@pulumi.input_type``), by Pulumi name."""
    namespace: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        module = sys.modules.get(base.__module__)
        if module is not None:
            namespace.update(vars(module))
    props: dict[str, InputType] = {}
    required: set[str] = set()
    for base in reversed(cls.__mro__):
        for value in vars(base).values():
            if not isinstance(value, property) or value.fget is None:
                continue
            pulumi_name = getattr(value.fget, "_pulumi_name", None)
            if not isinstance(pulumi_name, str):
                continue
            hint = value.fget.__annotations__.get("return")
            props[pulumi_name] = ANY if hint is None else parse_hint(hint, namespace)
            if _required(hint):
                required.add(pulumi_name)
    return ObjectSchema(cls.__name__, _package_label(cls.__module__), props, frozenset(required))


class UnknownResourceType(LookupError):
    """The package is installed but has no resource of this type token."""


_SDK_PACKAGES = {"aws": "pulumi_aws", "kubernetes": "pulumi_kubernetes"}


def sdk_label(package: str) -> str:
    """'aws' -> 'pulumi-aws 7.51.1': the installed SDK a finding's expectation comes from."""
    module = _SDK_PACKAGES.get(package)
    return _package_label(module) if module else package


def sdk_package(token: str) -> str | None:
    """The SDK module for a type token's package ('aws' -> 'pulumi_aws'), None for packages not read here."""
    return _SDK_PACKAGES.get(token.partition(":")[0])


_SCHEMAS: dict[str, ResourceSchema | None] = {}


def resource_schema(token: str) -> ResourceSchema | None:
    """The input schema of a resource type token; None when its SDK is not one this module reads, or when the
    token names no resource class (a Kubernetes custom resource); UnknownResourceType for an AWS token the
    installed pulumi-aws does not define."""
    if token in _SCHEMAS:
        return _SCHEMAS[token]
    schema = _load_resource_schema(token)
    _SCHEMAS[token] = schema
    return schema


def _load_resource_schema(token: str) -> ResourceSchema | None:
    from pulumi.runtime.rpc import get_resource_module

    package = sdk_package(token)
    parts = token.split(":")
    if package is None or len(parts) != 3:
        return None
    importlib.import_module(package)  # registers the package's resource modules
    module = get_resource_module(parts[0], parts[1], "")
    mod_info = getattr(module, "mod_info", None)
    class_name = mod_info.get("classes", {}).get(token) if isinstance(mod_info, dict) else None
    if module is None or not isinstance(mod_info, dict) or class_name is None:
        if parts[0] == "aws":
            raise UnknownResourceType(token)
        return None
    resource_class = getattr(importlib.import_module(mod_info["fqn"]), class_name)
    args_class = _args_class(resource_class)
    if args_class is None:
        return None
    args = object_schema(args_class)
    return ResourceSchema(token, resource_class, args, {"apiVersion", "kind"} <= set(args.props))


def _args_class(resource_class: type) -> type | None:
    """The resource's own args input type: `<Name>Args`, or `<Name>InitArgs` where the generator renamed it
    because a nested input type of the package already took `<Name>Args` (s3 BucketLogging); only a class the
    resource's own module defines counts, since the module also star-imports the package's nested types."""
    from pulumi._types import is_input_type

    module = sys.modules[resource_class.__module__]
    name = resource_class.__name__
    for candidate in (f"{name}Args", f"{name}InitArgs"):
        cls = getattr(module, candidate, None)
        if isinstance(cls, type) and cls.__module__ == module.__name__ and is_input_type(cls):
            return cls
    own = [
        v
        for k, v in vars(module).items()
        if isinstance(v, type) and v.__module__ == module.__name__ and not k.startswith("_") and is_input_type(v)
    ]
    return own[0] if len(own) == 1 else None


@cache
def resource_types(package: str) -> tuple[str, ...]:
    """Every resource type token a provider package registers (for did-you-mean on an unknown token)."""
    from pulumi.runtime import rpc

    importlib.import_module(_SDK_PACKAGES[package])
    tokens: list[str] = []
    # The registry has no public listing; get_resource_module answers one (package, module) at a time.
    for key, modules in rpc._RESOURCE_MODULES.items():
        if key.partition(":")[0] != package:
            continue
        for module in modules:
            info = getattr(module, "mod_info", None)
            if isinstance(info, dict):
                tokens.extend(info.get("classes", {}))
    return tuple(sorted(tokens))


def clear_caches() -> None:
    """Forget every parsed type (tests measuring a cold check)."""
    _SCHEMAS.clear()
    object_schema.cache_clear()
