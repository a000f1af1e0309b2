"""Reading engine-view values: unknowns, counts, dotted paths, tags, and user data as the instance gets it."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

# The analyzer's unknown sentinels (pulumi_policy.proxy UNKNOWN_*_VALUE): what a policy pack and the offline plan
# see for a value only known after `up`. The string one is gpucloud.plan.model.UNKNOWN.
UNKNOWN: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SENTINELS: Final = frozenset(
    {
        UNKNOWN,
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value in SENTINELS


def known(value: Any) -> bool:
    return value is not None and not is_unknown(value)


def get(inputs: Any, path: str, default: Any = None) -> Any:
    """The value at a dotted path of object keys and list indexes, or ``default``."""
    value = inputs
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif is_list(value) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return default
    return value


def count(value: Any) -> int | None:
    """A whole-number size from an engine-view value (floats, numeric strings), or None when unknown or not one."""
    if isinstance(value, bool) or not known(value):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
        return round(value)
    return None


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not known(value):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


# resource.Quantity's grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go): a signed decimal number, then a
# binary SI suffix (Ki..Ei), a decimal SI suffix (n, u, m, "", k, M, G, T, P, E) or a decimal exponent (e3, E-2).
# "E" alone is exa; "E" followed by digits is an exponent, which the regex's order decides.
_QUANTITY_SUFFIX: Final[dict[str, float]] = {
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
_QUANTITY: Final = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$"
)


def quantity(value: Any) -> float | None:
    """A Kubernetes resource quantity ("8", "1k", "500m", "512Gi", "1e3") as a number, by apimachinery's grammar;
    None when unknown or not a quantity. Every reader of requests, limits and sizes parses with this one."""
    if isinstance(value, bool) or value is None or is_unknown(value):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    match = _QUANTITY.match(str(value).strip())
    if match is None:
        return None
    number_part, exponent, suffix = match.groups()
    n = float(number_part + exponent) if exponent is not None else float(number_part) * _QUANTITY_SUFFIX[suffix or ""]
    # "1e999" parses to infinity, which bounds nothing a reader could use: not a quantity.
    return n if math.isfinite(n) else None


def text(value: Any) -> str | None:
    """A known, non-empty string, else None."""
    return value if isinstance(value, str) and value and not is_unknown(value) else None


def is_list(value: Any) -> bool:
    # Sequences, not only lists: a policy pack reads inputs through read-only Sequence proxies.
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def strings(value: Any) -> list[str]:
    """The known strings of a list (unknown elements left out)."""
    if not is_list(value):
        return []
    return [v for v in value if isinstance(v, str) and not is_unknown(v)]


def mappings(value: Any) -> list[Mapping[str, Any]]:
    if not is_list(value):
        return []
    return [v for v in value if isinstance(v, Mapping)]


def flag(value: Any) -> bool | None:
    """A boolean, including the launch template's string booleans ("true"); None when unknown or absent."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def tag_map(value: Any) -> dict[str, str]:
    """A tag map (``{key: value}``) or an ASG tag list (``[{key, value}]``) as plain strings; unknown keys are
    named ``<unknown:N>`` so that a tag is never silently lost."""
    out: dict[str, str] = {}
    if isinstance(value, Mapping):
        for k, v in value.items():
            out[str(k)] = str(v)
    elif is_list(value):
        for item in mappings(value):
            k = item.get("key")
            out[str(k) if known(k) else f"<unknown:{len(out)}>"] = str(item.get("value"))
    return out


def decode_user_data(value: Any) -> str | None:
    """User data as the instance reads it: base64 decoded when it is base64 text (launch templates take it
    encoded, instances and launch configurations plain); None when unknown or absent."""
    if not known(value):
        return None
    raw = str(value)
    try:
        return base64.b64decode(raw, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return raw


def obj(value: Any) -> Mapping[str, Any]:
    """An object input, or an empty one when it is absent, unknown or not an object."""
    return value if isinstance(value, Mapping) else {}
