"""Offline evaluation of the gpucloud guardrail pack on a recorded plan, as the Pulumi engine would run it.

Resource policies run once per resource on its inputs (wrapped in the analyzer's unknown-checking proxy);
stack policies run once on the whole plan, with parents, dependencies and property dependencies linked by
URN. A policy that reads an unknown value is reported under ``not_evaluated`` (the CLI shows that as an
advisory "can't run policy ... during preview"), never passed silently. Policies at level ``remediate``
rewrite the resource first, in registry order; one whose validation still fires counts as mandatory.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import pickle
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from gpucloud.guard.config import Effective, PolicyConfigError, check_config, effective, frozen
from gpucloud.plan.model import Plan, ResourceRecord, redact

__all__ = ["Evaluation", "PolicyConfigError", "evaluate", "evaluate_plan", "load_pack"]

PACK_DEFAULT_LEVEL = "advisory"


def load_pack() -> Any:
    """The policy pack that plugged in (gpucloud.guard.packs), loaded lazily: it loads the catalog."""
    from gpucloud.guard import packs

    return packs.load()


class PlanResourceOptions(PolicyResourceOptions):
    """Resource options as the analyzer shows them, plus retain_on_delete and custom, which the offline plan
    records and CrossGuard 1.21 does not pass (policies read them with getattr)."""

    def __init__(self, record: ResourceRecord) -> None:
        super().__init__(
            protect=record.protect,
            ignore_changes=list(record.ignore_changes),
            delete_before_replace=None,
            aliases=[],
            custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
            additional_secret_outputs=[],
            parent=record.parent,
        )
        self.retain_on_delete = record.retain_on_delete
        # Whether the resource is custom or a component: the engine does not say, the recorded plan does
        # (reviewed-types-only tells a component without visible children from an unreviewed custom type).
        self.custom = record.custom


@dataclass
class Evaluation:
    violations: list[dict[str, Any]] = field(default_factory=list)
    not_evaluated: list[dict[str, Any]] = field(default_factory=list)
    # Remediations the engine would apply at `up`: {"policy", "urn", "properties"} (the whole rewritten inputs).
    remediations: list[dict[str, Any]] = field(default_factory=list)
    # Resources a policy could not decide at preview: {"policy", "urn", "field", "reason", "action"}.
    undecided: list[dict[str, Any]] = field(default_factory=list)
    # What each remediation changes, for the report: {"policy", "urn", "changes": {input: new value}}.
    remediation_changes: list[dict[str, Any]] = field(default_factory=list)
    checks: int = 0

    def section(self, pack: str) -> dict[str, Any]:
        return {
            "pack": pack,
            "violations": self.violations,
            "not_evaluated": self.not_evaluated,
            "mandatory_violations": sum(1 for v in self.violations if v["enforcement"] == "mandatory"),
            "undecided": self.undecided,
            "remediations": self.remediation_changes,
        }


def run_awaitable(result: Awaitable[Any] | Any) -> Any:
    """Awaitable validators run on a fresh event loop, never on the one the Pulumi program used."""
    # Nearly every validator returns None; inspect.isawaitable costs more than the check it guards.
    if result is None or not inspect.isawaitable(result):
        return result
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(result)
    finally:
        loop.close()


def _reason(exc: UnknownValueError, policy: str, pack: str) -> str:
    return f"can't run policy '{policy}' from policy pack '{pack}' during preview: {exc.message}"


_FIELD = re.compile(r"\(unknown: ([^)]*)\): (.*?)\. Fix: ")


def _undecided_field(message: str, mark: str | None) -> tuple[str, str] | None:
    """(field, reason) of a pack "cannot be decided" violation message, else None."""
    at = message.find(mark) if mark else -1
    if at < 0:
        return None
    found = _FIELD.search(message, at)
    return (found.group(1), found.group(2)) if found else ("", message[at:])


def _changes(before: Mapping[str, Any], after: Mapping[str, Any], secrets: set[str]) -> dict[str, Any]:
    """The inputs a remediation sets or changes (secret values redacted, as in the violation messages)."""
    changed = {k: v for k, v in after.items() if k not in before or before[k] != v}
    if secrets:
        changed = json.loads(redact(json.dumps(changed, default=str), secrets))
    return changed


def _providers(plan: Plan) -> Callable[[ResourceRecord], PolicyProviderResource | None]:
    """The provider each resource is created with, as the analyzer hands it to policies: an explicit provider's
    recorded inputs, or the default provider of the package, whose inputs are the stack config of its
    namespace (``aws:defaultTags``, ``aws:region``)."""
    by_urn = plan.by_urn()
    defaults: dict[str, PolicyProviderResource] = {}

    def provider(record: ResourceRecord) -> PolicyProviderResource | None:
        if record.type.startswith("pulumi:"):
            return None
        ref = record.provider or ""
        urn = ref.rsplit("::", 1)[0] if ref.count("::") > 3 else ref
        explicit = by_urn.get(urn)
        if explicit is not None:
            props = unknown_checking_proxy(explicit.policy_inputs)
            return PolicyProviderResource(explicit.type, props, explicit.urn, explicit.name)
        package = record.type.split(":", 1)[0]
        if package not in defaults:
            prefix = f"{package}:"
            config = {k[len(prefix) :]: v for k, v in plan.config.items() if k.startswith(prefix)}
            urn = f"urn:pulumi:{plan.stack}::{plan.project}::pulumi:providers:{package}::default"
            defaults[package] = PolicyProviderResource(
                f"pulumi:providers:{package}", unknown_checking_proxy(config), urn, "default"
            )
        return defaults[package]

    return provider


def _stack_urn(plan: Plan) -> str:
    return f"urn:pulumi:{plan.stack}::{plan.project}::pulumi:pulumi:Stack::{plan.project}-{plan.stack}"


# Each policy's enforcement level and config, by name, for one (pack, config): a function of the two alone (the
# pack's initial config is its guardrails' schema defaults), kept for the plans of a process judged with the same
# config (`plan --all`, a corpus, the tests), which otherwise validated the config and layered it again per plan.
_SETUPS: dict[Any, tuple[Any, tuple[Any, ...], dict[str, Effective]]] = {}
_SETUPS_LIMIT = 256


def _config_key(config: Mapping[str, Any]) -> Any:
    """A key equal only for configs every step below treats alike. pickle's bytes tell what the validator tells
    apart (an int from a float or a bool, a list from a tuple, a dict from a subclass) and are written in C,
    about a tenth of the cost of walking the config; a config pickle cannot write gets frozen()'s key."""
    try:
        return pickle.dumps(config, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # anything pickle refuses (a lambda, a lock) just takes the slower key
        return frozen(config)


def _policy_setup(pack: Any, guardrails: Mapping[str, Any], policy_config: Mapping[str, Any] | None) -> dict[str, Any]:
    key = None if policy_config is None else _config_key(policy_config)
    held = tuple(guardrails.values())
    memo_key = (id(pack), tuple(map(id, held)), key)
    cacheable = policy_config is None or key is not None
    if cacheable:
        hit = _SETUPS.get(memo_key)
        # The memo holds the pack and its guardrails, so their ids cannot pass to other objects meanwhile.
        if hit is not None and hit[0] is pack and all(a is b for a, b in zip(hit[1], held, strict=True)):
            return hit[2]
    if policy_config is not None:
        check_config(policy_config, guardrails, getattr(pack, "RETIRED", None))
    initial = pack.initial_config()
    setup = {name: effective(g, PACK_DEFAULT_LEVEL, policy_config, initial) for name, g in guardrails.items()}
    if cacheable:
        if len(_SETUPS) >= _SETUPS_LIMIT:
            _SETUPS.clear()
        _SETUPS[memo_key] = (pack, held, setup)
    return setup


def evaluate(
    plan: Plan, policy_config: Mapping[str, Any] | None = None, cost: Mapping[str, Any] | None = None
) -> Evaluation:
    """Run every enabled policy of the pack on the plan; see the module docstring for the semantics."""
    pack = load_pack()
    guardrails = pack.by_name()
    setup = _policy_setup(pack, guardrails, policy_config)
    out = Evaluation()
    resource_policies: list[tuple[Any, Any, str, dict[str, Any]]] = []
    stack_policies: list[tuple[Any, Any, str, dict[str, Any]]] = []
    # The priced plan reaches the policies that need it as an argument; without one they price the resources.
    for policy in pack.policies(cost=cost) if cost is not None else pack.policies():
        g = guardrails[policy.name]
        eff = setup[policy.name]
        if eff.level == "disabled":
            continue
        # A copy per plan: the memo's dict must not carry what one plan's policy did to it into the next.
        entry = (policy, g, eff.level, dict(eff.config))
        (stack_policies if isinstance(policy, StackValidationPolicy) else resource_policies).append(entry)

    def reporter(policy: Any, g: Any, level: str, default_urn: str) -> Callable[..., None]:
        # A remediate policy whose validation still fires is reported as mandatory, as the engine does.
        enforcement = "mandatory" if level in ("mandatory", "remediate") else "advisory"

        def report(message: str, urn: str | None = None) -> None:
            violation = {
                "policy": policy.name,
                "enforcement": enforcement,
                "severity": g.severity.value,
                "urn": urn or default_urn,
                # Policies read secrets in plaintext; the CLI filters those values out of what it prints.
                "message": redact(message, secrets) if secrets else message,
            }
            found = _undecided_field(violation["message"], mark)
            if found is not None:
                violation["undecided"] = {"field": found[0], "reason": found[1]}
                out.undecided.append(
                    {"policy": policy.name, "urn": urn or default_urn, "field": found[0], "reason": found[1]}
                    | {"action": "block", "enforcement": enforcement}
                )
            out.violations.append(violation)

        return report

    def warned(policy: Any, urn: str, exc: UnknownValueError) -> None:
        found = [(u.urn, u.field, u.reason) for u in getattr(exc, "undecided", None) or []]
        for where, path, reason in found or [(urn, ".".join(map(str, exc.props)), exc.message)]:
            entry = {"policy": policy.name, "urn": where or urn, "field": path, "reason": reason}
            out.undecided.append(entry | {"action": "warn", "enforcement": "advisory"})

    # A pack without the fail-closed marker (an older pack, a test double) simply has no blocked undecided.
    mark = getattr(pack, "UNDECIDED_MARK", None)
    secrets: set[str] = set().union(*(r.secret_values() for r in plan.resources))
    remediating = [p for p in resource_policies if p[2] == "remediate" and p[0].has_remediation()]
    policy_resources: list[PolicyResource] = []
    stack_urn = _stack_urn(plan)
    provider_of = _providers(plan)
    for record in plan.resources:
        provider = provider_of(record)
        props = unknown_checking_proxy(record.policy_inputs)
        current: Mapping[str, Any] = record.policy_inputs
        opts = PlanResourceOptions(record)
        for policy, _g, _level, cfg in remediating:
            args = ResourceValidationArgs(record.type, props, record.urn, record.name, opts, provider, cfg)
            try:
                new_props = run_awaitable(policy.remediate(args))
            except UnknownValueError as exc:
                reason = f"can't run remediation '{policy.name}' during preview: {exc.message}"
                out.not_evaluated.append({"policy": policy.name, "urn": record.urn, "reason": reason})
                continue
            if new_props:
                out.remediations.append({"policy": policy.name, "urn": record.urn, "properties": dict(new_props)})
                changes = _changes(current, dict(new_props), secrets)
                current = dict(new_props)
                if changes:
                    out.remediation_changes.append({"policy": policy.name, "urn": record.urn, "changes": changes})
                props = unknown_checking_proxy(dict(new_props))
        for policy, g, level, cfg in resource_policies:
            args = ResourceValidationArgs(record.type, props, record.urn, record.name, opts, provider, cfg)
            out.checks += 1
            try:
                run_awaitable(policy.validate(args, reporter(policy, g, level, record.urn)))
            except UnknownValueError as exc:
                out.not_evaluated.append(
                    {"policy": policy.name, "urn": record.urn, "reason": _reason(exc, policy.name, pack.PACK_NAME)}
                )
                warned(policy, record.urn, exc)
        policy_resources.append(
            PolicyResource(record.type, props, record.urn, record.name, opts, provider, None, [], {})
        )
    _link(plan, policy_resources)

    # Objects rendered from charts (conformance, plan.derived) reach the Kubernetes policies for this evaluation
    # only, through the pack's own scope (the library never imports the pack).
    objects = [(d.owner, d.source, d.manifest) for d in plan.derived] if plan.derived else None
    scope = getattr(pack, "derived_objects", None)
    with scope(objects) if scope is not None else contextlib.nullcontext():
        for policy, g, level, cfg in stack_policies:
            stack_args = StackValidationArgs(policy_resources, cfg)
            out.checks += 1
            try:
                run_awaitable(policy.validate(stack_args, reporter(policy, g, level, stack_urn)))
            except UnknownValueError as exc:
                out.not_evaluated.append(
                    {"policy": policy.name, "urn": stack_urn, "reason": _reason(exc, policy.name, pack.PACK_NAME)}
                )
                warned(policy, stack_urn, exc)
    _opaque_undecided(plan, out, resource_policies + stack_policies, reporter, mark)
    return out


def _opaque_undecided(plan: Plan, out: Evaluation, policies: list[Any], reporter: Any, mark: str | None) -> None:
    """A remote component without an expansion model (plan.opaque) hides what it creates, so no guardrail can
    judge it: each enabled guardrail counts it as undecided, blocking where the guardrail's unknowns are
    'block' (prod), listed as not evaluated otherwise."""
    # A guardrail that already judged the component itself (reviewed-types-only finds childless components)
    # said what it could; counting it again would report the same unknown twice.
    judged = {(e.get("policy"), e.get("urn")) for e in (*out.undecided, *out.violations, *out.not_evaluated)}
    for opaque in plan.opaque:
        reason = f"what {opaque['type']} creates is not in the offline plan ({opaque['reason']})"
        for policy, g, level, cfg in policies:
            if (policy.name, opaque["urn"]) in judged:
                continue
            if cfg.get("unknowns") == "block" and mark:
                reporter(policy, g, level, opaque["urn"])(
                    f"{opaque['name']}: {mark}children): {reason}. Fix: plan it with the Pulumi CLI, or set this "
                    "policy's unknowns to 'warn' for this environment."
                )
                continue
            out.not_evaluated.append(
                {"policy": policy.name, "urn": opaque["urn"], "reason": f"can't run policy '{policy.name}': {reason}"}
            )
            out.undecided.append(
                {"policy": policy.name, "urn": opaque["urn"], "field": "children", "reason": reason}
                | {"action": "warn", "enforcement": "advisory"}
            )


def _link(plan: Plan, resources: list[PolicyResource]) -> None:
    by_urn = {r.urn: r for r in resources}
    for record, r in zip(plan.resources, resources):
        r.parent = by_urn.get(record.parent) if record.parent else None
        r.dependencies = [by_urn[u] for u in record.dependencies if u in by_urn]
        r.property_dependencies = {
            k: [by_urn[u] for u in urns if u in by_urn] for k, urns in record.property_dependencies.items()
        }


def evaluate_plan(
    plan: Plan, policy_config: Mapping[str, Any] | None = None, cost: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The `policies` section of the plan report (plan.schema.json): violations, not_evaluated, mandatory count."""
    return evaluate(plan, policy_config=policy_config, cost=cost).section(load_pack().PACK_NAME)
