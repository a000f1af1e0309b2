"""Validation errors turned into findings: the field path, what the API server expects, and placeholders (unknowns,
secrets) that stand in for a value of any type."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from referencing.exceptions import Unresolvable

from gpucloud.conformance import Finding
from gpucloud.conformance.k8s_schema.objects import K8sObject
from gpucloud.conformance.k8s_schema.openapi import SchemaValidator
from gpucloud.conformance.k8s_schema.structural import _UPSTREAM_PATTERN
from gpucloud.plan.model import SECRET, UNKNOWN


def _is_placeholder(value: Any) -> bool:
    # The sentinel stands in for a value of any type (an integer port, a whole nodeSelector map), so judging it
    # against the field's type would be a false error. Rather than guess a typed stand-in per field, the
    # objects are validated as recorded and an error on a placeholder is dropped; every other field of the same
    # object is still checked. A string that merely contains the sentinel came from an interpolation.
    return isinstance(value, str) and (UNKNOWN in value or value == SECRET)


def _on_placeholder(error: jsonschema.ValidationError) -> bool:
    """Whether the error is about a value not known at preview: the value itself, or inside a combinator."""
    instance = error.instance
    if _is_placeholder(instance):
        return True
    if error.validator in ("uniqueItems", "contains") and isinstance(instance, list):
        return any(_is_placeholder(v) for v in instance)
    return any(_on_placeholder(e) for e in error.context or ())


_IDENT = re.compile(r"^[A-Za-z_$][\w$-]*$")


def json_path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _IDENT.match(str(p)):
            out += f".{p}" if out else str(p)
        else:
            out += f"[{json.dumps(str(p))}]"
    return out


def _types(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    t = schema.get("type")
    types = [t] if isinstance(t, str) else [x for x in (t or []) if x != "null"]
    for key in ("oneOf", "anyOf"):
        for sub in schema.get(key) or []:
            types += [x for x in _types(sub) if x not in types]
    return types


_DEFAULTED = re.compile(r"\b[Dd]efaults to ")


def _server_defaulted(prop: Any) -> bool:
    """A required property the API server fills in before it validates, so leaving it out is fine.

    The OpenAPI document keeps such fields in `required` but says so in the field's own description
    (Job podFailurePolicy onPodConditions[].status: "Defaults to True."); a CRD says it with `default`.
    """
    if not isinstance(prop, dict):
        return False
    return "default" in prop or bool(_DEFAULTED.search(str(prop.get("description") or "")))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _known_properties(schema: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties")
    return sorted(props) if isinstance(props, dict) else []


@dataclass
class _Target:
    obj: K8sObject
    check: str
    source: str


def _describe(error: jsonschema.ValidationError, target: _Target) -> Iterator[Finding]:
    path = list(error.absolute_path)
    validator = error.validator
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    # validator_value is typed "Any | Unset"; an error jsonschema yields always carries the keyword's value.
    value: Any = error.validator_value
    obj = target.obj

    def finding(parts: list[Any], message: str, expected: str) -> Finding:
        return Finding(
            check=target.check,
            severity="error",
            urn=obj.urn,
            field=json_path(parts) or "(object)",
            message=f"{obj.kind} {obj.name or '(unnamed)'}: {message}",
            expected=expected,
            source=target.source,
            object=obj.ref,
        )

    if validator == "additionalProperties" and isinstance(instance, dict):
        known = _known_properties(schema)
        patterns = list((schema.get("patternProperties") or {}).keys())
        extras = [k for k in instance if k not in known and not any(re.search(p, k) for p in patterns)]
        for key in extras:
            near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            shown = ", ".join(known[:25]) + (", ..." if len(known) > 25 else "")
            yield finding(
                [*path, key],
                f"unknown field {key!r}{hint}: the API server rejects it under strict field validation "
                "and otherwise drops it",
                f"a field of this object: {shown}" if known else "no fields here",
            )
        return
    if validator == "required" and isinstance(instance, dict):
        props = schema.get("properties") or {}
        for key in value:
            if key in instance or _server_defaulted(props.get(key)):
                continue
            yield finding([*path, key], f"required field {key!r} is missing", f"required: {key}")
        return
    if validator == "type":
        want = [value] if isinstance(value, str) else [t for t in value if t != "null"] or list(value)
        yield finding(
            path,
            f"{_short(instance)} is {_json_type(instance)}, not {' or '.join(want)}",
            f"type: {' or '.join(want)}",
        )
        return
    if validator in ("oneOf", "anyOf"):
        want = _types(schema)
        if want and _json_type(instance) not in want:
            yield finding(
                path,
                f"{_short(instance)} is {_json_type(instance)}, not {' or '.join(want)}",
                f"type: {' or '.join(want)}",
            )
            return
        subs = "; ".join(sorted({e.message for e in error.context or ()}))[:300]
        yield finding(path, f"matches no allowed form ({subs})", f"{validator} of the schema's alternatives")
        return
    if validator == "enum":
        yield finding(
            path,
            f"{_short(instance)} is not an allowed value",
            "one of: " + ", ".join(json.dumps(v) for v in value),
        )
        return
    if validator == "const":
        yield finding(path, f"{_short(instance)} is not allowed", f"exactly {json.dumps(value)}")
        return
    if validator == "pattern":
        value = schema.get(_UPSTREAM_PATTERN, value)
        yield finding(path, f"{_short(instance)} does not match the pattern", f"pattern: {_short(value, 160)}")
        return
    yield finding(path, error.message[:300], f"{validator}: {_short(value, 120)}")


def validate_object(
    validator: SchemaValidator, obj: K8sObject, manifest: Any, check: str, source: str
) -> list[Finding]:
    target = _Target(obj, check, source)
    out: list[Finding] = []
    try:
        for error in validator.iter_errors(manifest):
            if _on_placeholder(error):
                continue
            if obj.patch and error.validator == "required":
                continue
            out.extend(_describe(error, target))
    except (re.error, jsonschema.exceptions.SchemaError, Unresolvable) as exc:
        # A schema this validator cannot apply (a regex dialect it lacks, a broken $ref in a CRD) is the
        # schema's fault, not the object's: say so once instead of failing the plan with a traceback.
        return [
            Finding(check, "warning", obj.urn, "(object)", f"{obj.kind} {obj.name}: not validated: {exc}", "", source,
                    obj.ref)
        ]  # fmt: skip
    # jsonschema raises `required` once per missing key, each carrying the whole list: keep one of each.
    return list(dict.fromkeys(out))
