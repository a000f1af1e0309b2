"""IAM policy documents inside infrastructure templates: a CloudFormation template body (JSON or YAML with the
short-form intrinsic tags ``!Ref``, ``!Sub``, ``!GetAtt``) and a Cloud Control resource's desired state.

The identity-policy carriers are the IAM resource types of the CloudFormation resource reference (``AWS::IAM::
Policy`` / ``ManagedPolicy``: ``PolicyDocument``; ``Role`` / ``User`` / ``Group``: ``Policies[].PolicyDocument``
and ``ManagedPolicyArns``; ``RolePolicy`` / ``UserPolicy`` / ``GroupPolicy``: ``PolicyDocument``). A document
or ARN written with an intrinsic function stays as the function's node (``{"Fn::Sub": ...}``): it is resolved
only at deploy time, so ``intrinsic`` tells the caller the document (or ARN) cannot be judged at preview.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

DOCUMENT_PROPS = {
    "AWS::IAM::Policy": "PolicyDocument",
    "AWS::IAM::ManagedPolicy": "PolicyDocument",
    "AWS::IAM::RolePolicy": "PolicyDocument",
    "AWS::IAM::UserPolicy": "PolicyDocument",
    "AWS::IAM::GroupPolicy": "PolicyDocument",
}
INLINE_HOLDERS = frozenset({"AWS::IAM::Role", "AWS::IAM::User", "AWS::IAM::Group"})


class _Loader(yaml.SafeLoader):
    """A safe loader that reads CloudFormation's short-form tags as the long form's node (``!Ref x`` ->
    ``{"Ref": "x"}``, ``!Sub s`` -> ``{"Fn::Sub": s}``), so a template parses instead of failing on a tag."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}": value}


_Loader.add_multi_constructor("!", _intrinsic)


def load(body: Any) -> Mapping[str, Any] | None:
    """A template (or desired state) from JSON or YAML text, or as given when already a mapping."""
    if isinstance(body, Mapping):
        return body
    if not isinstance(body, str) or not body.strip():
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        try:
            doc = yaml.load(body, Loader=_Loader)
        except yaml.YAMLError:
            return None
    return doc if isinstance(doc, Mapping) else None


def intrinsic(value: Any) -> bool:
    """The value is, or holds, an unresolved intrinsic function node (``Ref``, ``Fn::*``)."""
    if isinstance(value, Mapping):
        if (len(value) == 1 and next(iter(value)) in ("Ref",)) or any(str(k).startswith("Fn::") for k in value):
            return True
        return any(intrinsic(v) for v in value.values())
    if isinstance(value, list):
        return any(intrinsic(v) for v in value)
    return False


def _document(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return dict(value) if isinstance(value, Mapping) and ("Statement" in value or intrinsic(value)) else None


def documents(type_name: str, props: Any, where: str) -> Iterator[tuple[str, Any, str | None]]:
    """(where, document (a mapping, an intrinsic node, or None), managed policy ARN or None) for one resource's
    identity policies."""
    if not isinstance(props, Mapping):
        return
    if type_name in DOCUMENT_PROPS:
        yield f"{where}.{DOCUMENT_PROPS[type_name]}", _document(props.get(DOCUMENT_PROPS[type_name])), None
    elif type_name in INLINE_HOLDERS:
        for i, p in enumerate(props.get("Policies") or []):
            if isinstance(p, Mapping):
                yield f"{where}.Policies[{i}]", _document(p.get("PolicyDocument")), None
        for i, arn in enumerate(props.get("ManagedPolicyArns") or []):
            yield (
                f"{where}.ManagedPolicyArns[{i}]",
                arn if isinstance(arn, Mapping) else None,
                arn if isinstance(arn, str) else None,
            )


def template_documents(body: Any) -> Iterator[tuple[str, Any, str | None]]:
    """Every identity policy of every IAM resource a CloudFormation template defines."""
    template = load(body)
    resources = template.get("Resources") if template is not None else None
    if not isinstance(resources, Mapping):
        return
    for name, res in resources.items():
        if isinstance(res, Mapping) and isinstance(res.get("Type"), str):
            yield from documents(res["Type"], res.get("Properties"), f"Resources.{name}")
