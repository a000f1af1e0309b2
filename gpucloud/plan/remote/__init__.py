"""What multi-language component providers (pulumi-eks, awsx) register for their components, computed offline.

A remote component (`eks:index:Cluster`, `awsx:ec2:Vpc`) is constructed inside its provider plugin; under mocks the
program registers the component and nothing below it, so cost, guardrails and conformance would never see the
cluster, node groups, launch templates, roles or subnets. An expansion *model* registers, from the component's
inputs, the children the provider's TypeScript registers: same types, same names (``f"{name}-<role>"`` as the
provider spells them), same parents, the key inputs, and unknown (the analyzer's sentinel) where the provider
passes an id or other value only known after `up`. Each model names the repository, tag and file it follows.

A remote component without a model is *opaque*: the plan lists it with the reason, and the guardrails treat it
as undecided (gpucloud.guard), since what it creates cannot be judged.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpucloud.plan.model import UNKNOWN, is_unknown

# Registers one child with the mock monitor (as the provider's own RegisterResource call would) and returns it.
Register = Callable[["ChildSpec"], "Handle"]


@dataclass(frozen=True)
class Provenance:
    repository: str
    tag: str
    files: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.repository}@{self.tag}: {', '.join(self.files)}"


@dataclass
class ChildSpec:
    type: str
    name: str
    inputs: dict[str, Any]
    parent: str  # URN
    custom: bool = True
    dependencies: list[str] = field(default_factory=list)
    provider: str = ""


@dataclass
class Handle:
    """A registered child: its URN and its inputs as recorded (autonamed names filled in)."""

    urn: str
    type: str
    name: str
    inputs: dict[str, Any]

    def get(self, key: str, default: Any = UNKNOWN) -> Any:
        value = self.inputs.get(key, default)
        return default if value is None else value


@dataclass(frozen=True)
class Opaque:
    urn: str
    type: str
    name: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"urn": self.urn, "type": self.type, "name": self.name, "reason": self.reason}


class Context:
    """What a model needs: the component, its inputs, a way to register children, offline data sources and the
    facts earlier components left (a node group reads the cluster it joins)."""

    def __init__(
        self,
        type_: str,
        name: str,
        urn: str,
        inputs: Mapping[str, Any],
        register: Register,
        invoke: Callable[[str, dict[str, Any]], dict[str, Any]],
        facts: dict[str, dict[str, Any]],
        region: str,
        provider: str = "",
    ) -> None:
        self.type = type_
        self.name = name
        self.urn = urn
        self.inputs = dict(inputs)
        self._register = register
        self.invoke = invoke
        self.facts = facts
        self.region = region
        self.provider = provider

    def arg(self, key: str, default: Any = None) -> Any:
        value = self.inputs.get(key)
        return default if value is None else value

    def add(
        self,
        type_: str,
        name: str,
        inputs: Mapping[str, Any],
        parent: Handle | str | None = None,
        custom: bool = True,
        depends: list[Handle] | None = None,
        provider: str | None = None,
    ) -> Handle:
        parent_urn = parent.urn if isinstance(parent, Handle) else (parent or self.urn)
        clean = {k: v for k, v in inputs.items() if v is not None}
        spec = ChildSpec(
            type=type_,
            name=name,
            inputs=clean,
            parent=parent_urn,
            custom=custom,
            dependencies=[d.urn for d in depends or []],
            provider=self.provider if provider is None else provider,
        )
        return self._register(spec)

    def nested(self, type_: str, component: Handle, inputs: Mapping[str, Any]) -> Context:
        """The context of a component the provider constructs inside this one (a Fargate service's task
        definition), registering under it."""
        return Context(
            type_, component.name, component.urn, inputs, self._register, self.invoke, self.facts, self.region
        )


Model = Callable[[Context], None]


_GETTER = re.compile(r"@pulumi\.getter(?:\(name=\"([A-Za-z0-9_]+)\"\))?\s+def ([A-Za-z0-9_]+)\(")


@functools.cache
def sdk_input_names(token: str) -> frozenset[str] | None:
    """The input property names (camelCase) pulumi_aws declares for a resource type token, from its Args class.

    The providers spread their own args into aws resources (`{...args}`); the engine keeps only what the resource
    declares, so the models filter with the provider SDK's own list rather than a hand-written one. The list is
    read from the generated module's source (each `@pulumi.getter(name=...)` of `<Class>Args`), not by importing
    it: the models run on the SDK's executor threads while the program may be importing the same module.
    """
    package, module, cls = token.split(":")
    if package != "aws" or "/" not in module:
        return None
    spec = importlib.util.find_spec("pulumi_aws")
    if spec is None or spec.origin is None:
        return None
    group, file = module.split("/", 1)
    base = Path(spec.origin).parent if group == "index" else Path(spec.origin).parent / group
    source = base / (re.sub(r"(?<!^)(?=[A-Z])", "_", file).lower() + ".py")
    try:
        text = source.read_text(encoding="utf-8")
    except OSError:
        return None
    start = text.find(f"\nclass {cls}Args:")
    if start < 0:
        return None
    end = text.find("\nclass ", start + 1)
    body = text[start : end if end > 0 else len(text)]
    return frozenset(name or attr for name, attr in _GETTER.findall(body))


def only_inputs_of(token: str, values: Mapping[str, Any]) -> dict[str, Any]:
    names = sdk_input_names(token)
    if names is None:
        return dict(values)
    return {k: v for k, v in values.items() if k in names}


def known(value: Any) -> bool:
    return value is not None and not is_unknown(value)


def merged_tags(*parts: Any) -> Any:
    """`{...a, ...b}` of tag maps, or unknown when any part is."""
    out: dict[str, Any] = {}
    for part in parts:
        if part is None:
            continue
        if not isinstance(part, Mapping):
            return UNKNOWN
        out.update(part)
    return out


def _models() -> dict[str, tuple[Model, Provenance]]:
    from gpucloud.plan.remote import awsx, eks

    return {**eks.MODELS, **awsx.MODELS}


_MODELS: dict[str, tuple[Model, Provenance]] | None = None


def models() -> dict[str, tuple[Model, Provenance]]:
    global _MODELS
    if _MODELS is None:
        _MODELS = _models()
    return _MODELS


# Packages whose remote components gpucloud.plan.k8s_components expands (pulumi-kubernetes' own).
_ELSEWHERE = ("kubernetes:",)


class RemoteComponents:
    """One plan's remote components: expands the modelled ones, remembers the opaque ones."""

    def __init__(self, invoke: Callable[[str, dict[str, Any]], dict[str, Any]], region: str) -> None:
        self.invoke = invoke
        self.region = region
        self.facts: dict[str, dict[str, Any]] = {}
        self.opaque: list[Opaque] = []
        self.expanded: list[str] = []

    def handles(self, type_: str) -> bool:
        return not type_.startswith(_ELSEWHERE)

    def expand(self, type_: str, name: str, urn: str, inputs: Mapping[str, Any], register: Register) -> None:
        found = models().get(type_)
        if found is None:
            package = type_.split(":", 1)[0]
            self.opaque.append(
                Opaque(
                    urn,
                    type_,
                    name,
                    f"no expansion model for {type_} (a component the '{package}' provider plugin constructs); its "
                    "children are not in the plan, so cost, guardrails and conformance cannot see them",
                )
            )
            return
        model, _ = found
        ctx = Context(type_, name, urn, inputs, register, self.invoke, self.facts, self.region)
        try:
            model(ctx)
        except Unmodelled as exc:
            self.opaque.append(Opaque(urn, type_, name, f"{exc}; its children are not in the plan"))
            return
        self.expanded.append(urn)


class Unmodelled(Exception):
    """The model covers the component, but not this combination of inputs (the reason says which)."""


def provenance() -> dict[str, str]:
    """Type token -> where its model comes from (for the docs and tests)."""
    return {t: p.describe() for t, (_, p) in sorted(models().items())}


__all__ = [
    "UNKNOWN",
    "ChildSpec",
    "Context",
    "Handle",
    "Opaque",
    "Provenance",
    "RemoteComponents",
    "Unmodelled",
    "known",
    "merged_tags",
    "models",
    "only_inputs_of",
    "provenance",
    "sdk_input_names",
]
