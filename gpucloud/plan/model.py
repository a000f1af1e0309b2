"""The recorded plan: every resource as the engine shows it to a policy pack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# The analyzer's unknown sentinel: what a policy pack sees for a value that is only known after `up`.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SECRET = "[secret]"
# How the plan JSON's `outputs` section shows a value only known after `up` (the provider computes it): a
# marker string, in the spot where the value would be (a whole output, or one element of a list or mapping).
# The Pulumi CLI shows the same idea as `[unknown]` / `output<string>`; the raw sentinel never appears there.
UNKNOWN_OUTPUT = "[unknown]"


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


def unknown_marker(value: Any) -> Any:
    """`value` with every unknown sentinel replaced by UNKNOWN_OUTPUT, for the report's `outputs`."""
    if is_unknown(value):
        return UNKNOWN_OUTPUT
    if isinstance(value, dict):
        return {k: unknown_marker(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unknown_marker(v) for v in value]
    return value


@dataclass
class ResourceRecord:
    """One registered resource: identity, tree position, dependencies, engine-view inputs and options."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    dependencies: list[str]
    inputs: dict[str, Any]
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    provider: str | None = None
    protect: bool = False
    retain_on_delete: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    deleted_with: str | None = None
    # The inputs with secrets in plaintext, when there are any: what the engine hands a policy pack. Never
    # written to a report (to_json uses `inputs`, where each secret is SECRET).
    secret_inputs: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def policy_inputs(self) -> dict[str, Any]:
        return self.secret_inputs if self.secret_inputs is not None else self.inputs

    def secret_values(self) -> set[str]:
        """The plaintext strings behind this record's masked secrets, to keep them out of report text."""
        found: set[str] = set()
        if self.secret_inputs is not None:
            _collect_secrets(self.inputs, self.secret_inputs, found)
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "dependencies": self.dependencies,
            "inputs": self.inputs,
        }

    def get(self, path: str, default: Any = None) -> Any:
        """Read a dotted camelCase input path ('scalingConfig.maxSize'); list indexes as numbers."""
        value: Any = self.inputs
        for part in path.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return default
        return value


def _collect_secrets(masked: Any, plain: Any, found: set[str]) -> None:
    if masked == SECRET and plain != SECRET:
        _strings(plain, found)
    elif isinstance(masked, dict) and isinstance(plain, dict):
        for k, v in masked.items():
            _collect_secrets(v, plain.get(k), found)
    elif isinstance(masked, list) and isinstance(plain, list):
        for m, p in zip(masked, plain, strict=False):
            _collect_secrets(m, p, found)


def _strings(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if value:
            found.add(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, found)
    elif isinstance(value, list):
        for v in value:
            _strings(v, found)
    elif value is not None and not isinstance(value, bool):
        found.add(str(value))


def redact(text: str, secrets: set[str]) -> str:
    """`text` with each secret replaced by SECRET, longest first, as the Pulumi CLI filters its diagnostics
    (sdk/go/common/util/logging CreateFilter): a secret shorter than 3 characters, or `true` / `false` in any case,
    is left alone (masking every "x" or "true" would make every message unreadable and hide nothing), and a secret
    is also masked in its JSON-escaped form."""
    patterns: set[str] = set()
    for value in secrets:
        if len(value) < 3 or value.lower() in ("true", "false"):
            continue
        patterns.add(value)
        escaped = json.dumps(value)[1:-1]
        if escaped != value:
            patterns.add(escaped)
    for value in sorted(patterns, key=len, reverse=True):
        text = text.replace(value, SECRET)
    return text


@dataclass
class Plan:
    """All resources one program registered, in registration order."""

    project: str
    stack: str
    resources: list[ResourceRecord]
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    program_dir: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    # Objects the plan implies without registering them (rendered charts): filled by the conformance checks,
    # read by the scheduling check and the policy pack. gpucloud.conformance.DerivedObject instances.
    derived: list[Any] = field(default_factory=list)
    # pulumi.log.info / warn messages the program sent: {"severity", "message", "urn"}.
    log: list[dict[str, str]] = field(default_factory=list)
    # Remote (multi-language) components without an expansion model: {"urn", "type", "name", "reason"}
    # (gpucloud.plan.remote); the guardrails count each as undecided.
    opaque: list[dict[str, str]] = field(default_factory=list)
    # The stack file the config came from (for messages that must say which file to fix); "" for callables.
    stack_file: str = ""

    def __iter__(self) -> Iterator[ResourceRecord]:
        return iter(self.resources)

    def __len__(self) -> int:
        return len(self.resources)

    def by_urn(self) -> dict[str, ResourceRecord]:
        return {r.urn: r for r in self.resources}

    def of_type(self, *types: str) -> list[ResourceRecord]:
        return [r for r in self.resources if r.type in types]

    def children(self, urn: str) -> list[ResourceRecord]:
        return [r for r in self.resources if r.parent == urn]

    def find(self, type_: str, name: str) -> ResourceRecord:
        for r in self.resources:
            if r.type == type_ and r.name == name:
                return r
        raise KeyError(f"no {type_} named {name!r} in the plan")
