"""The SDK's per-class property types, resolved one property at a time.

The first time a resource, input or output class crosses the wire, the SDK (pulumi/_types.py,
`_raw_return_hints`) resolves the return annotation of every one of its properties with `typing.get_type_hints`:
each is a string such as ``pulumi.Output[Optional[Sequence['outputs.BucketCorsRule']]]`` that is compiled and
evaluated, nested forward references included. An S3 bucket has about thirty; a program sets a few, and the SDK
then looks up only the properties present (`types.get(key)` when it serialises inputs and resolves outputs).
About 0.35 CPU s of the Checkov comparison's 272 small programs went there, nearly all of it for properties
nobody read.

`install()` replaces the SDK's three functions that build those tables with ones that return the same tables as
read-only mappings whose entries are resolved on first lookup, with the SDK's own rules: the same globals and
locals for `get_type_hints`, the last non-None hint of a Pulumi name along the MRO, `unwrap_type`, and a bare
`Output` left out. Iterating a table resolves all of it, as before. A later SDK without these functions is left
alone (planning stays correct, only slower).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

_MISSING = object()
_installed = False
_lock = threading.Lock()


class _Table(Mapping[str, Any]):
    """Pulumi name -> value, each computed by `resolve` on first lookup; a name it maps to `_MISSING` is absent."""

    def __init__(self, names: Iterator[str], resolve: Callable[[str], Any]) -> None:
        self._names = list(dict.fromkeys(names))
        self._known = frozenset(self._names)
        self._resolve = resolve
        self._done: dict[str, Any] = {}

    def _value(self, key: str) -> Any:
        if key not in self._known:
            return _MISSING
        try:
            return self._done[key]
        except KeyError:
            # Executor threads and the loop may ask at once: both compute the same value, the last store wins.
            value = self._done[key] = self._resolve(key)
            return value

    def __getitem__(self, key: str) -> Any:
        value = self._value(key)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._value(key) is not _MISSING

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._names if self._value(k) is not _MISSING)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _lazy_raw_return_hints(sdk: Any) -> Callable[[type], Mapping[str, Any]]:
    @functools.cache
    def raw_return_hints(cls: type) -> Mapping[str, Any]:
        props: dict[str, list[Any]] = {}
        for _, pulumi_name, prop in sdk._py_properties(cls):
            props.setdefault(pulumi_name, []).append(prop)
        context: list[tuple[Any, dict[str, Any]]] = []

        def resolve(name: str) -> Any:
            if not context:
                # As the SDK: the globals of the class's modules, and Output and T as locals.
                from pulumi import Output

                context.append((sdk._globals_for_cls(cls), {"Output": Output, "T": type(None)}))
            globalns, localns = context[0]
            hint: Any = _MISSING
            # As the SDK's loop over _py_properties: a later (more derived) property wins unless its hint is None.
            for prop in props[name]:
                found = sdk.get_type_hints(prop.fget, globalns=globalns, localns=localns).get("return")
                if found is not None:
                    hint = found
            return hint

        return _Table(iter(props), resolve)

    return raw_return_hints


def _lazy_types_from_py_properties(sdk: Any) -> Callable[[type], Mapping[str, Any]]:
    @functools.cache
    def types_from_py_properties(cls: type) -> Mapping[str, Any]:
        from pulumi import Output

        raw = sdk._raw_return_hints(cls)

        def resolve(name: str) -> Any:
            hint = raw.get(name, _MISSING)
            if hint is _MISSING:
                return _MISSING
            typ = sdk.unwrap_type(hint)
            # As the SDK: Output given without a type argument says nothing about the value.
            return _MISSING if typ is Output else typ

        return _Table(iter(raw._names if isinstance(raw, _Table) else raw), resolve)

    return types_from_py_properties


def _lazy_resource_types(sdk: Any) -> Callable[[type], Mapping[str, Any]]:
    def resource_types(resource_cls: type) -> Mapping[str, Any]:
        # The SDK merges {**annotations, **properties}: a property's type wins over an annotation's.
        annotations = sdk._types_from_annotations(resource_cls)
        properties = sdk._types_from_py_properties(resource_cls)

        def resolve(name: str) -> Any:
            found = properties.get(name, _MISSING)
            return annotations.get(name, _MISSING) if found is _MISSING else found

        names = properties._names if isinstance(properties, _Table) else list(properties)
        return _Table(iter([*annotations, *names]), resolve)

    return resource_types


def install() -> None:
    """Swap the SDK's eager property-type tables for lazy ones, once per process."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        from pulumi import _types as sdk

        needed = ("_raw_return_hints", "_types_from_py_properties", "resource_types", "_py_properties")
        if not all(hasattr(sdk, n) for n in (*needed, "_globals_for_cls", "_types_from_annotations", "unwrap_type")):
            return
        replacements = {
            "_raw_return_hints": _lazy_raw_return_hints(sdk),
            "_types_from_py_properties": _lazy_types_from_py_properties(sdk),
            "resource_types": _lazy_resource_types(sdk),
        }
        for name, lazy in replacements.items():
            setattr(sdk, name, lazy)
