"""Reading one structured stack-config object (`gpucloud:platform`, `gpucloud:team`) into its spec model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import ValidationError

from gpucloud.spec.base import SpecModel
from gpucloud.spec.errors import SpecError, SpecIssue, issues_from_validation

NAMESPACE = "gpucloud"
M = TypeVar("M", bound=SpecModel)


def parse_object(model: type[M], key: str, data: Any, source: str, aws_region: str | None = None) -> M:
    """Validate `data` (a mapping, or JSON text as Pulumi config holds it) as `model`.

    Raises SpecError listing every problem with its path under `gpucloud:<key>`; when the stack also sets
    `aws:region`, it must equal the object's `region` (the provider and the spec would otherwise disagree).
    """
    prefix = f"{NAMESPACE}:{key}"
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SpecError([SpecIssue(prefix, f"not valid JSON ({exc.msg})")], source) from None
    if not isinstance(data, Mapping):
        raise SpecError([SpecIssue(prefix, f"must be an object, got {type(data).__name__}")], source)
    try:
        spec = model.model_validate(data)
    except ValidationError as exc:
        raise SpecError(issues_from_validation(exc, model, prefix), source) from None
    region = getattr(spec, "region", None)
    if aws_region is not None and aws_region != region:
        raise SpecError(
            [SpecIssue("aws:region", f"'{aws_region}' differs from {prefix}.region '{region}'; make them equal")],
            source,
        )
    return spec


def load_object(model: type[M], key: str) -> M:
    """Read and validate `gpucloud:<key>` from the running Pulumi program's stack config."""
    import pulumi

    source = f"stack '{pulumi.get_stack()}'"
    raw = pulumi.Config(NAMESPACE).get(key)
    if raw is None:
        raise SpecError(
            [SpecIssue(f"{NAMESPACE}:{key}", "required stack config object is missing from the stack file")], source
        )
    return parse_object(model, key, raw, source, pulumi.Config("aws").get("region"))
