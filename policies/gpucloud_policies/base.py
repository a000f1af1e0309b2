"""The guardrail model every policy module uses, and readers for the engine's view of resources.

A policy sees what the Pulumi engine sends an analyzer: camelCase keys, numbers as floats, read-only
``Mapping``/``Sequence`` proxies, launch-template "booleans" as strings, and unknown values that raise
``UnknownValueError`` when read. The readers here never raise anything else, whatever shape a property has,
so a malformed program produces a violation (or nothing), never a crashed policy.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Literal, cast

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import proxy as _proxy
from pulumi_policy.proxy import UNKNOWN_BOOLEAN_VALUE, UnknownValueError, unknown_checking_proxy
from pulumi_policy.proxy import _DictProxy as _PolicyDictProxy
from pulumi_policy.proxy import _ListProxy as _PolicyListProxy

from gpucloud.fleet import types as T

PACK_NAME = "gpucloud-guardrails"

Report = Callable[[str], None]
StackReport = Callable[[str, str], None]
Config = Mapping[str, Any]
ResourceValidator = Callable[[ResourceValidationArgs, Report, Config], None]
StackValidator = Callable[[StackValidationArgs, StackReport, Config], None]
Remediator = Callable[[ResourceValidationArgs, Config], "dict[str, Any] | None"]

_MISSING = object()

# Every policy's `unknowns` setting: what a resource the policy cannot decide at preview counts as.
UNKNOWNS_SCHEMA: Mapping[str, Any] = {
    "enum": ["block", "warn"],
    "default": "warn",
    "description": "A resource this policy cannot decide at preview (a value it needs is unknown): 'block' "
    "reports it as a violation at the policy's level, 'warn' lists it as undecided (an advisory diagnostic).",
}
# The words every "could not be decided" violation starts with; `gpucloud plan` reads the field path after them,
# so online (`pulumi preview --policy-pack`) and offline reports carry the same message.
UNDECIDED_MARK = "cannot be decided at preview (unknown: "


@dataclass(frozen=True)
class Guardrail:
    """One guardrail: identity and metadata (for the pack, SARIF and docs) plus its check.

    ``config`` holds JSON-schema property definitions, each with a ``default``; policies always read their
    config through ``settings()``, so they behave the same whether or not the caller merged the defaults.
    """

    id: str
    name: str
    description: str
    category: Literal["gpu", "cost", "security", "reliability"]
    severity: Severity
    enforcement: EnforcementLevel
    remediation_steps: str
    references: tuple[str, ...]
    kind: Literal["resource", "stack"]
    validate: Any
    resource_types: frozenset[str] = frozenset()
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    remediate: Any = None
    # For a guardrail that needs the priced plan: cost section -> validate function (gpucloud.guard passes it).
    bind_cost: Any = None
    # The guarded surfaces this guardrail judges (gpucloud.surface: compute, network, principal, iam, data,
    # secrets, pods) and the types it reads them on: a resource policy reads its resource_types; a stack policy
    # declares ``reads`` (type tokens or fnmatch patterns, "!pattern" to leave some out). The surface coverage
    # (coverage.py, docs/guardrails.md) and the reviewed-types guardrail are derived from these declarations.
    surfaces: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if "unknowns" not in self.config:
            object.__setattr__(self, "config", {**self.config, "unknowns": UNKNOWNS_SCHEMA})

    @property
    def read_types(self) -> frozenset[str]:
        """Type tokens and patterns this guardrail reads (its resource_types plus what it declares)."""
        return self.resource_types | self.reads

    def defaults(self) -> dict[str, Any]:
        # Read for every policy of every plan and on every validation (settings()); the schema is frozen with the
        # guardrail, so its defaults are worked out once, kept in the instance dict, and handed out as a copy.
        found = self.__dict__.get("_defaults")
        if found is None:
            found = self.__dict__["_defaults"] = {k: v["default"] for k, v in self.config.items() if "default" in v}
        return dict(found)

    def settings(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        merged = self.defaults()
        if given:
            merged.update({k: v for k, v in given.items() if k != "enforcementLevel"})
        return merged

    def with_cost(self, cost: Mapping[str, Any]) -> Guardrail:
        """This guardrail checking against a priced plan handed in, instead of pricing the resources itself."""
        return replace(self, validate=self.bind_cost(cost)) if self.bind_cost is not None else self

    def schema(self) -> PolicyConfigSchema | None:
        if not self.config:
            return None
        return PolicyConfigSchema(properties={k: dict(v) for k, v in self.config.items()})

    def policy(self) -> Policy:
        """The CrossGuard policy object; the same object runs in the Pulumi CLI and in `gpucloud plan`."""
        common: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "enforcement_level": self.enforcement,
            "config_schema": self.schema(),
            "severity": self.severity,
            "remediation_steps": self.remediation_steps,
            "tags": [self.category, self.id, *self.references],
            "display_name": f"{self.id} {self.name}",
        }
        if self.kind == "stack":
            return StackValidationPolicy(validate=self._stack_validator(), **common)
        return ResourceValidationPolicy(
            validate=self._resource_validator(),
            # The SDK types remediate as returning an awaitable, but it accepts plain mappings too.
            remediate=cast(Any, self._resource_remediator() if self.remediate is not None else None),
            **common,
        )

    def _resource_validator(self) -> Callable[[ResourceValidationArgs, Callable[..., None]], None]:
        types, check, settings = self.resource_types, self.validate, self.settings

        def validate(args: ResourceValidationArgs, report_violation: Callable[..., None]) -> None:
            remember_inputs(args.urn, args.props)
            if args.resource_type not in types:
                return
            name = args.name

            def report(message: str) -> None:
                report_violation(f"{name}: {message}")

            cfg = settings(args.get_config())
            try:
                check(args, report, cfg)
            except UnknownValueError as exc:
                # A resource policy already judges one resource; "warn" keeps the engine's advisory diagnostic.
                if cfg.get("unknowns") != "block":
                    raise
                report(undecided_message(Undecided(args.urn, _field(exc), exc.message)))

        return validate

    def _resource_remediator(self) -> Callable[[ResourceValidationArgs], dict[str, Any] | None]:
        types, fix, settings = self.resource_types, self.remediate, self.settings

        def remediate(args: ResourceValidationArgs) -> dict[str, Any] | None:
            if args.resource_type not in types:
                return None
            result: dict[str, Any] | None = fix(args, settings(args.get_config()))
            return result

        return remediate

    def _stack_validator(self) -> Callable[[StackValidationArgs, Callable[..., None]], None]:
        check, settings = self.validate, self.settings

        def validate(args: StackValidationArgs, report_violation: Callable[..., None]) -> None:
            def report(urn: str, message: str) -> None:
                report_violation(f"{urn_name(urn) or 'stack'}: {message}", urn or None)

            for r in args.resources:
                r.props = with_inputs(r.urn, r.props)
            cfg = settings(args.get_config())
            found: list[Undecided] = []
            token = _UNDECIDED.set(found)
            try:
                check(args, report, cfg)
            except UndecidedError:
                raise
            except UnknownValueError as exc:
                # Raised outside any `deciding` block: nothing of the policy could be decided.
                found.append(Undecided("", _field(exc), exc.message))
            finally:
                _UNDECIDED.reset(token)
            settle(found, report, cfg)

        return validate


# ---------------------------------------------------------------------------------------------------------
# What the engine showed the pack of each resource. A stack policy gets the preview's *outputs*
# (step_generator.go AnalyzeResources): the provider's planned state, where every computed attribute the program
# left unset (a node group's capacityType, a bucket's versioning) is unknown until AWS fills in its default. The
# same engine called Analyze on each resource's checked *inputs* first, in this process; an unknown output whose
# input was not computed is put back to that input (absent when unset), so a stack policy decides what the inputs
# decide, exactly as offline, and stays undecided where the input itself was unknown.

_SENTINELS = frozenset(getattr(_proxy, n) for n in dir(_proxy) if n.startswith("UNKNOWN_") and n.endswith("_VALUE"))
_INPUTS: dict[str, Any] = {}
_MAX_REMEMBERED = 100_000


def remember_inputs(urn: str, props: Any) -> None:
    if len(_INPUTS) >= _MAX_REMEMBERED:
        _INPUTS.clear()
    _INPUTS[urn] = props["__target"] if _is_proxy(props) else props


def with_inputs(urn: str, props: Any) -> Any:
    """Stack-policy props with each wholly unknown output replaced by the input Analyze saw (dropped if unset)."""
    inputs = _INPUTS.get(urn)
    target = props["__target"] if _is_proxy(props) else props
    if not isinstance(inputs, Mapping) or not isinstance(target, Mapping):
        return props
    unknown_keys = [k for k, v in target.items() if isinstance(v, str) and v in _SENTINELS]
    if not unknown_keys:
        return props
    merged = dict(target)
    for k in unknown_keys:
        if k in inputs:
            merged[k] = inputs[k]
        else:
            del merged[k]
    return unknown_checking_proxy(merged)


# ---------------------------------------------------------------------------------------------------------
# Readers. Unknown values raise UnknownValueError (as the proxy does); every other oddity yields the default.


def keys(m: Any) -> list[str]:
    """Key names without reading values (reading an unknown value would raise)."""
    if isinstance(m, Mapping):
        return [k for k in m if isinstance(k, str)]
    return []


def has(m: Any, key: str) -> bool:
    """True when the key is present, without reading its (possibly unknown) value."""
    if type(m) is _PolicyDictProxy:
        # The proxy hands out its plain target under this key; `in` on the proxy itself would read the value.
        return key in m["__target"]
    if isinstance(m, dict):
        return key in m
    return key in keys(m)


def get(m: Any, *path: str | int, default: Any = None) -> Any:
    """Walk a path of keys and list indexes; missing steps or wrong shapes give ``default``."""
    cur = m
    for step in path:
        if isinstance(step, str):
            if not isinstance(cur, Mapping) or not has(cur, step):
                return default
            cur = cur[step]
        else:
            if not is_list(cur) or not -len(cur) <= step < len(cur):
                return default
            cur = cur[step]
        if cur is None:
            return default
    return cur


def is_list(v: Any) -> bool:
    return isinstance(v, Sequence) and not isinstance(v, str | bytes)


def items(v: Any) -> list[Any]:
    """A list property as a plain list (each element read, so unknown elements raise); other shapes: []."""
    if not is_list(v):
        return []
    return [v[i] for i in range(len(v))]


def maps(v: Any) -> list[Mapping[str, Any]]:
    return [x for x in items(v) if isinstance(x, Mapping)]


def strings(v: Any) -> list[str]:
    """A list of strings (a lone string counts as a one-element list); non-strings are dropped."""
    if isinstance(v, str):
        return [v]
    return [x for x in items(v) if isinstance(x, str)]


def truthy(v: Any) -> bool:
    """pulumi-aws passes some launch-template booleans as strings: "false" must not count as true."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return v.strip().lower() == "true"
    return False


def falsy(v: Any) -> bool:
    """Explicitly false (False or "false"); a missing value is neither truthy nor falsy."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, str):
        return v.strip().lower() == "false"
    return False


def number(v: Any, default: float | None = None) -> float | None:
    """Numbers arrive as floats; strings holding numbers are accepted; bools are not numbers."""
    if isinstance(v, bool):
        return default
    if isinstance(v, int | float):
        return float(v) if v == v else default
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return default
    return default


def integer(v: Any, default: int | None = None) -> int | None:
    n = number(v)
    if n is None or n in (float("inf"), float("-inf")):
        return default
    return int(n)


def text(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def plain(v: Any) -> Any:
    """A deep plain copy of a proxy (for remediation results); unknown sentinels are kept as they are."""
    if _is_proxy(v):
        v = v["__target"]
    if isinstance(v, Mapping):
        return {k: plain(v[k]) for k in keys(v)} if not isinstance(v, dict) else {k: plain(x) for k, x in v.items()}
    if is_list(v):
        return [plain(x) for x in (v if isinstance(v, list | tuple) else items(v))]
    return v


def _is_proxy(v: Any) -> bool:
    # The analyzer's proxies hand out their plain target under "__target" (pulumi_policy.proxy).
    return type(v) in (_PolicyDictProxy, _PolicyListProxy)


def present(m: Any, key: str) -> bool:
    """The key is set to something other than null/"": an unknown (computed) value counts as set.

    Presence is all a rule needs for computed ARNs (a KMS key ARN is unknown until the key exists), so this
    never raises on unknowns; pitfall 2 in the guardrails reference.
    """
    if not has(m, key):
        return False
    raw = m["__target"][key] if _is_proxy(m) else m[key]
    return raw is not None and raw != ""


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if urn else urn


def urn_type(urn: str) -> str:
    parts = urn.split("::")
    return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else ""


def unknown(path: str, message: str | None = None) -> UnknownValueError:
    """The signal for "cannot be decided from what the engine shows", reported as not evaluated."""
    exc = UnknownValueError(UNKNOWN_BOOLEAN_VALUE, path.split("."))
    if message:
        exc.message = message
    return exc


# ---------------------------------------------------------------------------------------------------------
# Fail closed on unknowns: a stack policy decides each resource on its own, inside `deciding(resource)`.


@dataclass(frozen=True)
class Undecided:
    """A resource a policy could not decide at preview: the unknown field (dotted path) and why."""

    urn: str
    field: str
    reason: str


class UndecidedError(UnknownValueError):
    """Raised at the end of a stack policy, after every decidable resource was reported, when unknowns are
    'warn': the Pulumi engine shows it as one advisory "can't run policy" diagnostic whose text lists every
    undecided resource; `gpucloud plan` reads ``undecided`` for the per-resource list."""

    def __init__(self, undecided: Sequence[Undecided]) -> None:
        first = undecided[0]
        super().__init__(UNKNOWN_BOOLEAN_VALUE, first.field.split(".") if first.field else [])
        self.undecided = list(undecided)
        listed = "; ".join(f"{urn_name(u.urn) or 'stack'} ({u.field or 'stack'}): {u.reason}" for u in undecided)
        self.message = f"{len(undecided)} resource(s) could not be decided: {listed}"


_UNDECIDED: contextvars.ContextVar[list[Undecided] | None] = contextvars.ContextVar("gpucloud_undecided", default=None)


def _field(exc: UnknownValueError) -> str:
    return ".".join(str(p) for p in getattr(exc, "props", None) or [])


class deciding:
    """Judge one resource: an unknown value read inside the block marks that resource undecided (with the
    field path) and the policy goes on with the next one, instead of the whole policy being skipped.

    Outside a stack policy run (no collector) the unknown propagates as before.
    """

    def __init__(self, resource: Any, prefix: str = "") -> None:
        self.urn = resource if isinstance(resource, str) else str(getattr(resource, "urn", ""))
        self.prefix = prefix

    def __enter__(self) -> deciding:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        if not isinstance(exc, UnknownValueError) or isinstance(exc, UndecidedError):
            return False
        sink = _UNDECIDED.get()
        if sink is None:
            return False
        field = _field(exc)
        mark_undecided(
            self.urn, f"{self.prefix}.{field}" if self.prefix and field else self.prefix or field, exc.message
        )
        return True


class via:
    """Reading another resource's inputs on behalf of the one being judged: an unknown there is reported
    under that resource's name (``<name>.<field>``), so the report says where the unknown value sits."""

    def __init__(self, resource: Any) -> None:
        self.name = str(resource.name)

    def __enter__(self) -> via:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]:
        if isinstance(exc, UnknownValueError) and not isinstance(exc, UndecidedError):
            exc.props = [self.name, *[str(p) for p in getattr(exc, "props", None) or []]]
        return False


def mark_undecided(urn: str, field: str, reason: str) -> None:
    """Record a resource as undecided without an exception (e.g. literal subnet IDs whose zones are unseen)."""
    sink = _UNDECIDED.get()
    if sink is None:
        raise unknown(field, reason)
    sink.append(Undecided(urn, field, reason))


def undecided_message(u: Undecided) -> str:
    return (
        f"{UNDECIDED_MARK}{u.field or 'stack'}): {u.reason}. Fix: make the value known at preview (a literal, or "
        "derived from known inputs), or set this policy's unknowns to 'warn' for this environment."
    )


def settle(found: Sequence[Undecided], report: StackReport, cfg: Config) -> None:
    """After a stack policy has reported what it could decide: 'block' reports each undecided resource as a
    violation, 'warn' raises one UndecidedError listing them all."""
    unique = list({(u.urn, u.field): u for u in found}.values())
    if not unique:
        return
    if cfg.get("unknowns") == "block":
        for u in unique:
            report(u.urn, undecided_message(u))
        return
    raise UndecidedError(unique)


def count(v: Any) -> int:
    """Length of a list property without reading its (possibly unknown) elements."""
    return len(v) if is_list(v) else 0


def tags_of(props: Any, key: str = "tags") -> dict[str, str]:
    """A tag map as plain strings; one computed value makes the whole map unknown (pulumi/pulumi#7854)."""
    tags = get(props, key)
    if not isinstance(tags, Mapping):
        return {}
    return {k: tags[k] if isinstance(tags[k], str) else str(tags[k]) for k in keys(tags)}


def provider_default_tags(provider: Any) -> dict[str, str]:
    """Tags the AWS provider adds to every taggable resource it creates (``defaultTags.tags``): an explicit
    provider's input, or the default provider's ``aws:defaultTags`` config, which the engine passes as a JSON
    string. Resource tags win over these on a key clash (the provider merges them into tagsAll)."""
    props = getattr(provider, "props", None)
    if props is None or not str(getattr(provider, "resource_type", "")).startswith(T.AWS_PROVIDER):
        return {}
    raw = get(props, "defaultTags")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return tags_of(raw) if isinstance(raw, Mapping) else {}


__all__ = [
    "PACK_NAME",
    "UNDECIDED_MARK",
    "UNKNOWNS_SCHEMA",
    "Config",
    "EnforcementLevel",
    "Guardrail",
    "Report",
    "Severity",
    "StackReport",
    "Undecided",
    "UndecidedError",
    "UnknownValueError",
    "count",
    "deciding",
    "falsy",
    "get",
    "has",
    "integer",
    "is_list",
    "items",
    "keys",
    "maps",
    "mark_undecided",
    "number",
    "plain",
    "present",
    "provider_default_tags",
    "settle",
    "strings",
    "tags_of",
    "text",
    "truthy",
    "undecided_message",
    "unknown",
    "urn_name",
    "urn_type",
    "via",
]
