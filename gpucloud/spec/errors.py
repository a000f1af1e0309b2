"""Turns pydantic validation errors into one message that lists every bad field path with the fix."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

# The error type of cross-field spec rules (spec.base.RuleViolations); here, beside the code that renders it, so that
# catching SpecError (the plan engine does, for every program) does not import pydantic.
RULE_ERROR = "spec_rule"


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a stack spec: where (as the user wrote it) and how to fix it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SpecError(ValueError):
    """Invalid stack spec. `issues` holds every problem; str() is the one-paragraph message the CLI prints."""

    def __init__(self, issues: list[SpecIssue], source: str = "stack spec") -> None:
        self.issues = issues
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        noun = "problem" if len(self.issues) == 1 else "problems"
        lines = [f"invalid {self.source}: {len(self.issues)} {noun}"]
        lines += [f"  - {issue}" for issue in self.issues]
        return "\n".join(lines)


def _join(prefix: str, loc: tuple[Any, ...]) -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out += f".{part}" if out else str(part)
    return out


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """Follow a validation location through nested models to find which model a key belongs to."""
    from pydantic import BaseModel

    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = next(
            (f for n, f in current.model_fields.items() if part in (n, f.alias)),
            None,
        )
        if field is None:
            return None
        current = _unwrap_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap_model(annotation: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def allowed_keys(model: type[BaseModel]) -> list[str]:
    return sorted(f.alias or n for n, f in model.model_fields.items())


def issues_from_validation(err: ValidationError, model: type[BaseModel], prefix: str) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    for e in err.errors(include_url=False):
        loc = tuple(e["loc"])
        etype = e["type"]
        if etype == RULE_ERROR:
            # Cross-field rules carry their own sub-paths relative to the model that raised them.
            for field, message in (e.get("ctx") or {}).get("violations", []):
                sub = tuple(int(x) if x.isdigit() else x for x in field.split(".")) if field else ()
                issues.append(SpecIssue(_join(prefix, loc + sub), message))
            continue
        msg = e["msg"]
        if etype == "extra_forbidden":
            owner = _model_at(model, loc[:-1])
            keys = ", ".join(allowed_keys(owner)) if owner else ""
            msg = f"unknown key '{loc[-1]}'" + (f"; allowed keys: {keys}" if keys else "")
        elif etype == "missing":
            msg = "required field is missing"
        elif etype.startswith("value_error"):
            msg = msg.removeprefix("Value error, ")
        else:
            got = e.get("input")
            if not isinstance(got, dict | list):
                msg = f"{msg} (got {got!r})"
        issues.append(SpecIssue(_join(prefix, loc), msg))
    return issues
