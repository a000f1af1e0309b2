"""A CRD's structural schema (openAPIV3Schema with the x-kubernetes-* extensions) as JSON Schema the validators
run, with the API server's pruning and defaulting semantics."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from gpucloud.conformance.k8s_schema.objects import _OBJECT_META

# Where a pattern the CRD spells in RE2/ECMA syntax keeps its own spelling, for the findings that quote it.
_UPSTREAM_PATTERN = "x-gpucloud-upstream-pattern"
Convert = Callable[[Any], Any]


def _bool_exclusive(node: dict[str, Any], bound: str, exclusive: str) -> None:
    # OpenAPI 3.0 spells an exclusive bound as a boolean beside the bound; JSON Schema 2020-12 as a number.
    flag = node.get(exclusive)
    if isinstance(flag, bool):
        del node[exclusive]
        if flag and bound in node:
            node[exclusive] = node.pop(bound)


def structural_to_jsonschema(node: Any, *, root: bool = False) -> Any:
    """A CRD's structural OpenAPI v3 schema as the JSON Schema 2020-12 the API server effectively applies.

    - fields a schema does not declare are pruned by the API server (or rejected under strict field
      validation) unless `x-kubernetes-preserve-unknown-fields`: additionalProperties false;
    - `x-kubernetes-int-or-string`: integer or string; `nullable`: null allowed;
    - a required field with a `default` is defaulted before validation, so it never counts as missing;
    - `x-kubernetes-embedded-resource` objects always accept apiVersion, kind and metadata;
    - CEL rules (`x-kubernetes-validations`) are not evaluated.
    """
    return _structural_node(node, root=root, child=structural_to_jsonschema)


def _as_is(node: Any) -> Any:
    return node


def _structural_node(node: Any, *, root: bool = False, child: Convert = _as_is) -> Any:
    """One node of `structural_to_jsonschema`: its own keywords converted, its child schemas through `child`.

    With `child` left as is, the children stay structural and are converted when the fast check first
    compiles them (`SchemaValidator` via `OpenAPISchemas.structural_validator`); the schemas this function
    adds are written in structural form too, so that either way each node is converted exactly once.
    """
    if isinstance(node, list):
        return [child(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: child(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = child(value)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            out[key] = [child(v) for v in value]
        elif key in ("description", "example", "x-kubernetes-validations", "default", "format", "$schema", "id"):
            continue
        else:
            out[key] = copy.deepcopy(value) if isinstance(value, dict | list) else value
    if isinstance(out.get("pattern"), str):
        pattern = _python_pattern(out["pattern"])
        if pattern is None:
            del out["pattern"]
        elif pattern != out["pattern"]:
            out[_UPSTREAM_PATTERN] = out["pattern"]  # what findings quote: the CRD's own spelling
            out["pattern"] = pattern
    _bool_exclusive(out, "minimum", "exclusiveMinimum")
    _bool_exclusive(out, "maximum", "exclusiveMaximum")
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        if "anyOf" not in out and "oneOf" not in out:
            out["type"] = ["integer", "string"]
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    props: dict[str, Any] = node["properties"] if isinstance(node.get("properties"), dict) else {}
    if isinstance(out.get("required"), list):
        out["required"] = [k for k in out["required"] if not (isinstance(props.get(k), dict) and "default" in props[k])]
        if not out["required"]:
            del out["required"]
    preserve = out.pop("x-kubernetes-preserve-unknown-fields", False)
    embedded = out.pop("x-kubernetes-embedded-resource", False)
    if embedded:
        out.setdefault("properties", {})
        for k in ("apiVersion", "kind"):
            out["properties"].setdefault(k, child({"type": "string"}))
        out["properties"].setdefault(
            "metadata", child({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
        )
    is_object = out.get("type") == "object" or "properties" in out
    if is_object and not preserve and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if root:
        out.setdefault("properties", {})
        out["properties"]["apiVersion"] = child({"type": "string"})
        out["properties"]["kind"] = child({"type": "string"})
        # The API server validates a custom resource's metadata as ObjectMeta whatever the CRD says of it.
        out["properties"]["metadata"] = child({"$ref": _OBJECT_META})
    return out


def _python_pattern(pattern: str) -> str | None:
    """A CRD `pattern` (Go RE2 syntax, as the API server runs it) in a form Python's re compiles, or None.

    RE2 accepts inline flags anywhere (prometheus-operator writes `^(?i)(abort|warn)?$`); Python wants them at
    the very start, which for a leading `^` means the same thing. A pattern Python cannot express is not
    checked rather than crashing the check.
    """
    candidates = [pattern]
    m = re.match(r"^\^(\(\?[aiLmsux]+\))(.*)$", pattern, re.DOTALL)
    if m:
        candidates.append(f"{m.group(1)}^{m.group(2)}")
    for candidate in candidates:
        try:
            re.compile(candidate)
        except re.error:
            continue
        return candidate
    return None


def _drop_nulls(value: Any) -> Any:
    # The API server prunes null fields of a custom resource before it validates (and before defaulting).
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value
