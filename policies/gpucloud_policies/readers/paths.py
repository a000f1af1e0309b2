"""The values at a surface-inventory property path, as a policy sees them.

The surface inventory (gpucloud.surface) names where each type carries a surface by Pulumi property path
(``clusterConfig.instanceType``, ``containers.environment``, ``items.spec.parameters``): dotted camelCase names,
where any step may hold a list (an SDK ``Sequence`` input; the engine shows a nested block as a list of maps or a
single map, both are walked). ``values`` yields every value found at such a path, with the concrete place it sits
(list indexes written out), so a guardrail that reads an inventory path reads every value the path can reach.

A step whose value is unknown at preview (computed) yields the place with ``UNKNOWN``: the caller decides what
an unknown means for its question (the pack's ``unknowns`` rule), instead of the walk raising half-way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..base import UnknownValueError, has, is_list, keys

UNKNOWN: Final = object()


def _read(m: Mapping[str, Any], key: str) -> Any:
    try:
        return m[key]
    except UnknownValueError:
        return UNKNOWN


def _elements(value: Any) -> Iterator[tuple[str, Any]]:
    """("[i]", element) for a list, ("", value) for anything else; an unknown element is UNKNOWN."""
    if not is_list(value):
        yield "", value
        return
    for i in range(len(value)):
        try:
            yield f"[{i}]", value[i]
        except UnknownValueError:
            yield f"[{i}]", UNKNOWN


def values(props: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(where, value) for every value at ``path`` (dotted Pulumi names); absent or null steps yield nothing."""
    steps = path.split(".")

    def walk(node: Any, i: int, where: str) -> Iterator[tuple[str, Any]]:
        for suffix, item in _elements(node) if i else [("", node)]:
            here = where + suffix
            if item is UNKNOWN:
                yield here, UNKNOWN
                continue
            if i == len(steps):
                if item is not None:
                    yield here, item
                continue
            if not isinstance(item, Mapping) or not has(item, steps[i]):
                continue
            child = _read(item, steps[i])
            if child is None:
                continue
            yield from walk(child, i + 1, f"{here}.{steps[i]}" if here else steps[i])

    # Each step after the first expands a list (the last one too: a list of maps is many values at one path).
    yield from walk(props, 0, "")


def strings(value: Any, where: str, name: str) -> Iterator[tuple[str, str, str | None]]:
    """(where, name, text or None when unknown) for every string inside a value: a map's entries by key, a
    name/value entry (``{"name": "DB_URL", "value": ...}``) by its name, lists by index."""
    if value is UNKNOWN:
        yield where, name, None
    elif isinstance(value, str):
        yield where, name, value
    elif isinstance(value, Mapping):
        label = next((value[k] for k in ("name", "key", "parameterName") if isinstance(_peek(value, k), str)), None)
        for k in keys(value):
            v = _read(value, k)
            if label is not None and k in ("name", "key", "parameterName"):
                continue
            yield from strings(v, f"{where}.{k}", label if label is not None else k)
    elif is_list(value):
        for suffix, item in _elements(value):
            yield from strings(item, where + suffix, name)


def _peek(m: Mapping[str, Any], key: str) -> Any:
    value = _read(m, key) if has(m, key) else None
    return None if value is UNKNOWN else value
