"""Launch-template inheritance: what an instance leaves unset comes from the template it launches from.

A resource policy sees one resource, so it cannot read the template's inputs; it does not need to. A template
created by this program is referred to by its ID or name, which is unknown at preview (the ID always; the name
when autonamed or computed), and that template is judged by the same policy on its own. A literal ID or name
points at a template the plan may not hold: what the instance inherits from it cannot be decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy.proxy import (
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
)
from pulumi_policy.proxy import _DictProxy as _PolicyDictProxy

from .base import get, has, unknown

_SENTINELS = frozenset(
    {UNKNOWN_STRING_VALUE, UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_ARRAY_VALUE, UNKNOWN_OBJECT_VALUE}
)


def _raw(m: Any, key: str) -> Any:
    # The proxy raises on an unknown value; its plain target under "__target" does not.
    target = m["__target"] if type(m) is _PolicyDictProxy else m
    return target.get(key) if isinstance(target, Mapping) else None


def inherits(props: Any, field: str) -> bool:
    """True when ``field`` is unset on the instance and the instance launches from a template this program
    creates (judged by the same policy); raises UnknownValueError (undecided) when the template is named by a
    literal ID or name the program does not create."""
    if has(props, field):
        return False
    lt = get(props, "launchTemplate")
    if not isinstance(lt, Mapping):
        return False
    for key in ("id", "name"):
        raw = _raw(lt, key)
        if raw in _SENTINELS:
            return True
        if isinstance(raw, str) and raw:
            raise unknown(
                f"launchTemplate.{key}",
                f"{field} comes from launch template {raw!r}, which this program does not create, so its value is "
                "not visible at preview",
            )
    return False
