"""Shared base for every stack-spec model and the rule-error helper used by cross-field checks."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from gpucloud.spec.errors import RULE_ERROR


class SpecModel(BaseModel):
    """Stack-file models: camelCase keys as Pulumi config uses them, unknown keys rejected, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
        str_strip_whitespace=True,
    )


class RuleViolations:
    """Collects every cross-field problem of one model so the user sees all of them at once."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, message: str) -> None:
        """Record a problem at `field` (a dotted camelCase path relative to the model, '' for the model itself)."""
        self.items.append((field, message))

    def extend(self, items: Iterable[tuple[str, str]]) -> None:
        self.items.extend(items)

    def raise_if_any(self) -> None:
        # One custom error carrying all problems: pydantic stops a model validator at the first raise,
        # and bad input gets every offending path in one message (docs/architecture.md, principle 2).
        if self.items:
            raise PydanticCustomError(
                RULE_ERROR,
                "; ".join(f"{f}: {m}" if f else m for f, m in self.items),
                {"violations": list(self.items)},
            )
