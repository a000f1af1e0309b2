"""Conformance of every provider resource's recorded inputs to what the provider and the AWS API accept.

Two kinds of check, both on the engine view the plan records (camelCase keys, numbers as floats; the unknown
sentinel and masked secrets match anything):

* ``aws.inputs`` / ``kubernetes.inputs``: each AWS resource (and each pulumi-kubernetes resource that is not a
  Kubernetes API object, such as ``helm.sh/v3:Release``; API objects are the OpenAPI schema check's) against its
  input type in the installed provider SDK (`gpucloud.conformance.provider_types`): keys the type does not declare,
  values of the wrong JSON type, required inputs that are missing, recursively through nested input types. These
  are the failures the bridged provider's Check reports (pulumi-terraform-bridge's type checker: "an unexpected
  argument was provided", "expected array type, got string type") and Terraform's own validation rejects ("Invalid
  or unknown key", "Missing required argument"). JSON types follow the bridge's coercions: a string input takes
  numbers and booleans, a number input takes numeric strings, a boolean input takes "true"/"false".
* ``aws.api`` (`gpucloud.conformance.aws_api`, on the helpers of this module): where a resource's inputs map onto
  an AWS API request shape, the enums, numeric ranges, string lengths and patterns of botocore's bundled service
  models for each input whose name matches a member of the shape: the values the API call at `pulumi up` would
  refuse.

Provider resources (``pulumi:providers:*``) and component resources are not checked.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.provider_types import (
    InputType,
    ObjectSchema,
    UnknownResourceType,
    object_schema,
    resource_schema,
    resource_types,
    sdk_label,
)
from gpucloud.conformance.verdicts import VerdictStore
from gpucloud.plan.model import SECRET, UNKNOWN, ResourceRecord

# strconv.ParseBool, which the bridge uses to read a string as a boolean.
_BOOL_STRINGS = frozenset({"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"})
_MAX_LISTED = 14


# The SDK's tag for a special value inside a property map (pulumi.runtime.rpc._special_sig_key).
_SPECIAL_SIG = "4dabf18193072939515e22adb298388d"


def is_opaque(value: Any) -> bool:
    """Unknown until `up`, or a secret (masked, or still in the wire's secret wrapper): such a value matches every
    type and constraint, as the provider's checker lets computed and secret values through."""
    if isinstance(value, str):
        return value == SECRET or UNKNOWN in value
    return isinstance(value, dict) and _SPECIAL_SIG in value


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def preview(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def listing(names: list[str] | tuple[str, ...]) -> str:
    shown = sorted(names)
    more = len(shown) - _MAX_LISTED
    return ", ".join(shown[:_MAX_LISTED]) + (f", ... ({more} more)" if more > 0 else "")


def did_you_mean(key: str, candidates: list[str]) -> str | None:
    """The closest declared name: same letters ignoring case and underscores first, then difflib's best."""
    folded = key.replace("_", "").replace("-", "").lower()
    for name in candidates:
        if name.lower() == folded:
            return name
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[c] for c in difflib.get_close_matches(folded, list(lowered), n=1, cutoff=0.6)]
    return close[0] if close else None


# ---------------------------------------------------------------------------------------------------------------
# Provider input types


class _TypeWalker:
    """Validates one resource's inputs against its input type; yields (field, message, expected, source)."""

    def object(self, value: dict[str, Any], schema: ObjectSchema, path: str) -> Iterator[tuple[str, str, str, str]]:
        for name in sorted(schema.required):
            if value.get(name) is None:
                yield (
                    join_path(path, name),
                    f"required input {name!r} is missing",
                    f"{name} set ({schema.props[name].describe()})",
                    schema.source,
                )
        for key, item in value.items():
            declared = schema.props.get(key)
            where = join_path(path, key)
            if declared is None:
                guess = did_you_mean(key, list(schema.props))
                hint = f"; did you mean {guess!r}?" if guess else ""
                yield (
                    where,
                    f"unknown input {key!r}{hint}",
                    f"an input of {schema.name}: {listing(list(schema.props))}",
                    schema.source,
                )
                continue
            yield from self.value(item, declared, where, schema)

    def value(
        self, value: Any, declared: InputType, path: str, owner: ObjectSchema
    ) -> Iterator[tuple[str, str, str, str]]:
        if value is None or is_opaque(value) or declared.kind == "any":
            return
        kind = declared.kind
        if kind == "union":
            for option in declared.options:
                if not any(True for _ in self.value(value, option, path, owner)):
                    return
            yield self._mismatch(value, declared, path, owner)
        elif kind == "string" or kind == "resource":
            if isinstance(value, (list, dict)):
                yield self._mismatch(value, declared, path, owner)
            elif declared.values and isinstance(value, str) and value not in declared.values:
                yield (path, f"{preview(value)} is not a value this input admits", declared.describe(), owner.source)
        elif kind in ("number", "integer"):
            number: float | None = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str):
                try:
                    number = float(value)
                except ValueError:
                    number = None
            if number is None or math.isnan(number):
                yield self._mismatch(value, declared, path, owner)
            elif kind == "integer" and not number.is_integer():
                yield (path, f"{preview(value)} is not a whole number", "integer", owner.source)
        elif kind == "boolean":
            if not (isinstance(value, bool) or (isinstance(value, str) and value in _BOOL_STRINGS)):
                yield self._mismatch(value, declared, path, owner)
        elif kind == "array":
            if not isinstance(value, list):
                yield self._mismatch(value, declared, path, owner)
                return
            for index, item in enumerate(value):
                if declared.items is not None:
                    yield from self.value(item, declared.items, join_path(path, index), owner)
        elif kind == "map":
            if not isinstance(value, dict):
                yield self._mismatch(value, declared, path, owner)
                return
            for key, item in value.items():
                # As the bridge's checker: keys starting "__" are the engine's own bookkeeping.
                if declared.items is not None and not key.startswith("__"):
                    yield from self.value(item, declared.items, join_path(path, key), owner)
        elif kind == "object" and declared.cls is not None:
            if not isinstance(value, dict):
                yield self._mismatch(value, declared, path, owner)
                return
            yield from self.object(value, object_schema(declared.cls), path)

    @staticmethod
    def _mismatch(value: Any, declared: InputType, path: str, owner: ObjectSchema) -> tuple[str, str, str, str]:
        return (
            path,
            f"{preview(value)} is {_article(json_kind(value))}, not {_article(declared.describe())}",
            declared.describe(),
            owner.source,
        )


def _article(text: str) -> str:
    return ("an " if text[:1] in "aeiou" else "a ") + text


def _checked_resources(ctx: ConformanceContext, package: str) -> Iterator[ResourceRecord]:
    for r in ctx.plan.resources:
        if r.custom and r.type.partition(":")[0] == package:
            yield r


def provider_input_findings(r: ResourceRecord, check: str) -> Iterator[Finding]:
    """Findings for one resource's inputs against its provider input type (none when the type is not read)."""
    try:
        schema = resource_schema(r.type)
    except UnknownResourceType:
        package = r.type.partition(":")[0]
        guess = did_you_mean(r.type, list(resource_types(package)))
        hint = f"; did you mean {guess!r}?" if guess else ""
        yield Finding(
            check,
            "error",
            r.urn,
            "type",
            f"{r.type} is not a resource type of the installed provider{hint}",
            "a resource type token the provider defines",
            f"{sdk_label(package)} resource registry",
        )
        return
    if schema is None or schema.kubernetes_object:
        return
    for where, message, expected, source in _TypeWalker().object(r.inputs, schema.args, ""):
        yield Finding(check, "error", r.urn, where, message, expected, source)


def _guarded(check: str, r: ResourceRecord, produce: Callable[[ResourceRecord], Iterator[Finding]]) -> list[Finding]:
    """One resource's findings; a failure inside the check becomes a warning on that resource, not a traceback
    that loses every other resource's findings."""
    try:
        return list(produce(r))
    except Exception as exc:  # any failure of the check itself, reported and contained
        return [
            Finding(
                check,
                "warning",
                r.urn,
                "",
                f"the check could not read this resource's inputs: {type(exc).__name__}: {exc}",
                "a resource the check can read",
                "gpucloud conformance",
            )
        ]


def _aws_input_findings(r: ResourceRecord) -> Iterator[Finding]:
    return provider_input_findings(r, "aws.inputs")


def _kubernetes_input_findings(r: ResourceRecord) -> Iterator[Finding]:
    return provider_input_findings(r, "kubernetes.inputs")


_CODE = tuple(
    Path(__file__).with_name(n)
    for n in ("aws_inputs.py", "aws_api.py", "provider_types.py", "botocore_models.py", "verdicts.py")
)


def _versions() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("pulumi", "pulumi-aws", "pulumi-kubernetes", "botocore"):
        try:
            out.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist}=none")
    return out


def _remembered(
    ctx: ConformanceContext, check: str, package: str, produce: Callable[[ResourceRecord], Iterator[Finding]]
) -> Iterator[Finding]:
    """Run a per-resource check, skipping resources whose identical inputs it found clean before (see verdicts)."""
    store = VerdictStore.load(check, _versions(), _CODE)
    for r in _checked_resources(ctx, package):
        digest = store.digest(r.type, r.inputs)
        if store.known_valid(digest):
            continue
        found = _guarded(check, r, produce)
        store.record(digest, found)
        yield from found
    store.save()


@register_check("aws.inputs")
def check_aws_inputs(ctx: ConformanceContext) -> Iterator[Finding]:
    """Every AWS resource's inputs against its pulumi-aws input type."""
    yield from _remembered(ctx, "aws.inputs", "aws", _aws_input_findings)


@register_check("kubernetes.inputs")
def check_kubernetes_inputs(ctx: ConformanceContext) -> Iterator[Finding]:
    """pulumi-kubernetes resources that are not API objects (helm.v3.Release) against their input types."""
    yield from _remembered(ctx, "kubernetes.inputs", "kubernetes", _kubernetes_input_findings)
