"""Run single guardrails on literal resources, as the engine would (for tests and for policy authors).

Props go through the analyzer's unknown-checking proxy; use ``UNKNOWN`` for a computed value. Config is the
policy's schema defaults overlaid with what the caller passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from gpucloud.guard import run_awaitable

UNKNOWN = UNKNOWN_STRING_VALUE
PROJECT = "test"


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:test::{PROJECT}::{type_}::{name}"


def options(
    protect: bool = False, retain_on_delete: bool | None = False, custom: bool | None = None
) -> PolicyResourceOptions:
    opts = PolicyResourceOptions(
        protect=protect,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
    )
    if retain_on_delete is not None:
        opts.retain_on_delete = retain_on_delete  # type: ignore[attr-defined]
    if custom is not None:
        opts.custom = custom  # type: ignore[attr-defined]
    return opts


@dataclass
class Res:
    """A literal resource: ``deps`` maps an input property to the names of the resources it depends on."""

    type: str
    name: str
    props: Mapping[str, Any]
    deps: Mapping[str, list[str]] = field(default_factory=dict)
    protect: bool = False
    retain_on_delete: bool | None = False
    # None: as online, where the engine does not say whether a resource is custom; False: a component.
    custom: bool | None = None
    parent: str | None = None  # the name of its parent resource


def _guardrail(name: str, cost: Mapping[str, Any] | None = None) -> tuple[Any, Any]:
    from gpucloud.guard import load_pack

    pack = load_pack()
    policy = next(p for p in (pack.policies(cost=cost) if cost is not None else pack.policies()) if p.name == name)
    return pack.by_name()[name], policy


def resource_messages(policy_name: str, r: Res, config: Mapping[str, Any] | None = None) -> list[str]:
    """Violation messages for one resource; UnknownValueError propagates (not evaluated)."""
    g, policy = _guardrail(policy_name)
    args = ResourceValidationArgs(
        r.type,
        unknown_checking_proxy(dict(r.props)),
        urn(r.type, r.name),
        r.name,
        options(r.protect, r.retain_on_delete),
        None,
        g.settings(config),
    )
    found: list[str] = []
    run_awaitable(policy.validate(args, lambda message, urn=None: found.append(message)))
    return found


def flagged(policy_name: str, resources: Iterable[Res], config: Mapping[str, Any] | None = None) -> set[str]:
    """Names of the resources a resource policy reports."""
    return {r.name for r in resources if resource_messages(policy_name, r, config)}


def remediate(policy_name: str, r: Res, config: Mapping[str, Any] | None = None) -> Any:
    g, policy = _guardrail(policy_name)
    args = ResourceValidationArgs(
        r.type, unknown_checking_proxy(dict(r.props)), urn(r.type, r.name), r.name, options(), None, g.settings(config)
    )
    return run_awaitable(policy.remediate(args))


def stack_messages(
    policy_name: str,
    resources: Iterable[Res],
    config: Mapping[str, Any] | None = None,
    found: list[tuple[str, str]] | None = None,
    cost: Mapping[str, Any] | None = None,
) -> list[tuple[str, str]]:
    """(resource name or "", message) for each violation a stack policy reports; ``cost`` is the priced plan a
    policy that needs one gets (as `gpucloud plan` hands it over); pass ``found`` to keep what was reported
    before an UndecidedError (unknowns 'warn') propagates."""
    g, policy = _guardrail(policy_name, cost)
    items = list(resources)
    prs = {
        r.name: PolicyResource(
            r.type,
            unknown_checking_proxy(dict(r.props)),
            urn(r.type, r.name),
            r.name,
            options(r.protect, r.retain_on_delete, r.custom),
            None,
            None,
            [],
            {},
        )
        for r in items
    }
    for r in items:
        pr = prs[r.name]
        pr.parent = prs[r.parent] if r.parent else None
        pr.property_dependencies = {k: [prs[n] for n in names] for k, names in r.deps.items()}
        pr.dependencies = list({n: prs[n] for names in r.deps.values() for n in names}.values())
    found = [] if found is None else found

    def report(message: str, urn: str | None = None) -> None:
        found.append((urn.rsplit("::", 1)[-1] if urn else "", message))

    run_awaitable(policy.validate(StackValidationArgs(list(prs.values()), g.settings(config)), report))
    return found


def stack_flagged(policy_name: str, resources: Iterable[Res], config: Mapping[str, Any] | None = None) -> set[str]:
    return {name for name, _ in stack_messages(policy_name, resources, config)}
