"""Resources, the engine's way: properties marshalled as MarshalProperties does (KeepUnknowns, KeepSecrets),
providers, parents and dependencies, and the preview outputs AnalyzeStack sees."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from gpucloud.guard.online.common import PROVIDER_PREFIX, SECRET_SIG, SIG_KEY, STACK_TYPE
from gpucloud.plan.model import SECRET, UNKNOWN, UNKNOWN_OUTPUT, Plan, ResourceRecord

# Resources, the engine's way


class Secret:
    """An engine secret (resource.Secret): marshalled as the secret signature object."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other.value == self.value

    def __repr__(self) -> str:
        return f"Secret({self.value!r})"


def marshal_value(value: Any) -> Any:
    """MarshalPropertyValue with KeepUnknowns and KeepSecrets, to the JSON shape a protobuf Struct holds.

    Unknowns already hold the unknown-string sentinel (the SDK sends every unknown as that string and the engine
    marshals a computed string back to it), so they pass through unchanged.
    """
    if isinstance(value, Secret):
        return {SIG_KEY: SECRET_SIG, "value": marshal_value(value.value)}
    if isinstance(value, Mapping):
        return {str(k): marshal_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [marshal_value(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    return str(value)


def marshal_properties(props: Mapping[str, Any], *, internal_keys: bool = False) -> Any:
    from google.protobuf import struct_pb2

    struct = struct_pb2.Struct()
    struct.update(
        {
            k: marshal_value(v)
            for k, v in props.items()
            if internal_keys or not (isinstance(k, str) and k.startswith("__"))
        }
    )
    return struct


def unmarshal_properties(struct: Any) -> dict[str, Any]:
    """A Struct back to engine values, secrets as Secret (UnmarshalProperties with KeepSecrets)."""
    from google.protobuf import json_format

    return {k: _unmarshal(v) for k, v in json_format.MessageToDict(struct).items()}


def _unmarshal(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return Secret(_unmarshal(value.get("value")))
        return {k: _unmarshal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmarshal(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Engine values with secrets unwrapped: what a policy reads."""
    if isinstance(value, Secret):
        return plain(value.value)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def engine_inputs(record: ResourceRecord) -> dict[str, Any]:
    """The checked inputs the engine holds: the recorded view with each masked secret back as Secret(plaintext)."""
    if record.secret_inputs is None:
        return dict(record.inputs)
    return dict(_rewrap(record.inputs, record.secret_inputs))


def _rewrap(masked: Any, revealed: Any) -> Any:
    if isinstance(masked, str) and masked == SECRET and revealed != SECRET:
        return Secret(revealed)
    if isinstance(masked, dict) and isinstance(revealed, dict):
        return {k: _rewrap(v, revealed.get(k)) for k, v in masked.items()}
    if isinstance(masked, list) and isinstance(revealed, list):
        return [_rewrap(m, r) for m, r in zip(masked, revealed, strict=False)]
    return masked


@dataclass
class EngineResource:
    """plugin.AnalyzerStackResource: what the engine sends about one resource."""

    urn: str
    type: str
    name: str
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any] | None = None
    parent: str = ""
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    protect: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    provider: EngineResource | None = None

    def _options(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        # The options the step generator fills in; retainOnDelete and deletedWith have no field in the protocol.
        return analyzer_pb2.AnalyzerResourceOptions(
            protect=self.protect,
            ignoreChanges=self.ignore_changes,
            deleteBeforeReplace=False,
            deleteBeforeReplaceDefined=False,
            additionalSecretOutputs=[],
            aliases=[],
            customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(),
            parent=self.parent,
        )

    def _provider(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        if self.provider is None:
            return None
        p = self.provider
        return analyzer_pb2.AnalyzerProviderResource(
            type=p.type, urn=p.urn, name=p.name, properties=marshal_properties(p.inputs)
        )

    def analyze_request(self, *, internal_keys: bool) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        return analyzer_pb2.AnalyzeRequest(
            type=self.type,
            urn=self.urn,
            name=self.name,
            properties=marshal_properties(self.inputs, internal_keys=internal_keys),
            options=self._options(),
            provider=self._provider(),
        )

    def stack_resource(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        deps = {
            k: analyzer_pb2.AnalyzerPropertyDependencies(urns=list(v))
            for k, v in self.property_dependencies.items()
            if v
        }
        return analyzer_pb2.AnalyzerResource(
            type=self.type,
            urn=self.urn,
            name=self.name,
            properties=marshal_properties(self.outputs if self.outputs is not None else self.inputs),
            options=self._options(),
            provider=self._provider(),
            parent=self.parent,
            dependencies=list(self.dependencies),
            propertyDependencies=deps,
        )


def stack_urn(plan: Plan) -> str:
    return f"urn:pulumi:{plan.stack}::{plan.project}::{STACK_TYPE}::{plan.project}-{plan.stack}"


def _config_value(value: Any) -> Any:
    # Config values reach a provider as strings (config.Value); a secure value is a secret.
    if isinstance(value, dict) and set(value) == {"secure"}:
        return Secret("offline-secret-placeholder")
    return value if isinstance(value, str) else json.dumps(value)


def _package_version(package: str) -> str | None:
    try:
        return metadata.version(f"pulumi_{package.replace('-', '_')}")
    except metadata.PackageNotFoundError:
        return None


def default_provider(plan: Plan, package: str) -> EngineResource:
    """default_providers.go: the package's stack config (namespace stripped) plus its version, named
    ``default_<major>_<minor>_<patch>``."""
    inputs: dict[str, Any] = {}
    for key, value in plan.config.items():
        namespace, _, name = key.partition(":")
        if namespace == package and name:
            inputs[name] = _config_value(value)
    version = _package_version(package)
    name = "default"
    if version:
        inputs["version"] = version
        name += "_" + "_".join(version.split("+")[0].split("-")[0].split(".")[:3])
    type_ = f"{PROVIDER_PREFIX}{package}"
    return EngineResource(
        urn=f"urn:pulumi:{plan.stack}::{plan.project}::{type_}::{name}",
        type=type_,
        name=name,
        custom=True,
        inputs=inputs,
    )


def _outputs_marker_to_engine(value: Any) -> Any:
    if value == UNKNOWN_OUTPUT:
        return UNKNOWN
    if isinstance(value, dict):
        return {k: _outputs_marker_to_engine(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_outputs_marker_to_engine(v) for v in value]
    return value


def engine_resources(plan: Plan) -> list[EngineResource]:
    """Every resource of the stack as the engine holds it in a preview, in registration order: the root stack,
    each default provider before its first user, then the program's resources."""
    root = stack_urn(plan)
    stack = EngineResource(
        urn=root,
        type=STACK_TYPE,
        name=f"{plan.project}-{plan.stack}",
        custom=False,
        inputs={},
        outputs=_outputs_marker_to_engine(dict(plan.outputs)),
    )
    out: list[EngineResource] = [stack]
    by_urn = {r.urn: r for r in plan.resources}
    built: dict[str, EngineResource] = {}
    defaults: dict[str, EngineResource] = {}

    def provider_for(record: ResourceRecord) -> EngineResource | None:
        if not record.custom or record.type.startswith(PROVIDER_PREFIX):
            return None
        if record.provider:
            urn = record.provider.rsplit("::", 1)[0]
            if urn in built:
                return built[urn]
            ref = by_urn.get(urn)
            if ref is None:
                return None
            return EngineResource(urn=ref.urn, type=ref.type, name=ref.name, custom=True, inputs=engine_inputs(ref))
        package = record.type.split(":", 1)[0]
        if package not in defaults:
            defaults[package] = default_provider(plan, package)
            out.append(defaults[package])
        return defaults[package]

    for record in plan.resources:
        provider = provider_for(record)
        r = EngineResource(
            urn=record.urn,
            type=record.type,
            name=record.name,
            custom=record.custom,
            inputs=engine_inputs(record),
            parent=record.parent or "",
            dependencies=list(record.dependencies),
            property_dependencies={k: list(v) for k, v in record.property_dependencies.items()},
            protect=record.protect,
            ignore_changes=list(record.ignore_changes),
            provider=provider,
        )
        built[r.urn] = r
        out.append(r)
    return out


@functools.cache
def computed_outputs(type_: str) -> frozenset[str]:
    """Outputs the provider computes when the program leaves them unset, from the provider SDK's resource class:
    an output typed ``Output[T]`` (not ``Output[Optional[T]]``) is required in the provider schema, which for a
    bridged provider means computed (Optional+Computed or output-only). Empty when the SDK is not installed."""
    package, _, rest = type_.partition(":")
    module_token, _, class_name = rest.partition(":")
    parts = module_token.split("/")[:-1]
    module_name = f"pulumi_{package.replace('-', '_')}" + "".join(f".{p}" for p in parts if p != "index")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError):
        return frozenset()
    out = set()
    for attr in vars(cls).values():
        getter = attr.fget if isinstance(attr, property) else None
        name = getattr(getter, "_pulumi_name", None)
        if name and "Optional" not in str(getattr(getter, "__annotations__", {}).get("return", "Optional")):
            out.add(name)
    return frozenset(out)


def preview_outputs(r: EngineResource) -> dict[str, Any]:
    """What a preview holds as a resource's outputs (CreateStep.Apply with Preview: the provider's planned state):
    the (remediated) checked inputs echoed, and every computed output the program left unset as unknown. The root
    stack's outputs are its exports; a component's are what it registered, which the recorded plan does not keep,
    so its inputs stand in (no policy reads a component's properties)."""
    if r.type == STACK_TYPE:
        return dict(r.outputs or {})
    if not r.custom or r.type.startswith(PROVIDER_PREFIX):
        return dict(r.inputs)
    unknown = {name: UNKNOWN for name in computed_outputs(r.type) if name not in r.inputs}
    return {**unknown, **r.inputs}
