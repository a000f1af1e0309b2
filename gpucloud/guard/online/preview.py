"""A whole preview: Remediate and Analyze per resource, AnalyzeStack once, and the served pack as a context."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpucloud.guard.online.common import CANT_RUN, PACK_DIR, OnlineError, _level_name
from gpucloud.guard.online.config import (
    PolicyConfig,
    PolicyInfo,
    initial_config,
    parse_config_file,
    policy_infos,
    reconcile_config,
)
from gpucloud.guard.online.launch import PackServer, launch_spec
from gpucloud.guard.online.marshal import engine_resources, plain, preview_outputs, unmarshal_properties
from gpucloud.plan.model import Plan

# A whole preview


@dataclass
class OnlineResult:
    """What the CLI would print for one preview: violations, "can't run" diagnostics and remediations."""

    violations: list[dict[str, Any]] = field(default_factory=list)
    not_evaluated: list[dict[str, Any]] = field(default_factory=list)
    remediations: list[dict[str, Any]] = field(default_factory=list)
    not_applicable: list[dict[str, Any]] = field(default_factory=list)
    analyze_calls: int = 0


def _collect(out: OnlineResult, response: Any, urn_of: Any) -> None:
    for d in response.diagnostics:
        urn = urn_of(d.urn)
        if d.message.startswith(CANT_RUN):
            out.not_evaluated.append({"policy": d.policyName, "urn": urn, "reason": d.message})
            continue
        level = _level_name(d.enforcementLevel)
        out.violations.append(
            {
                "policy": d.policyName,
                "urn": urn,
                "enforcement": "mandatory" if level == "remediate" else level,
                "message": d.message,
            }
        )
    for n in response.not_applicable:
        out.not_applicable.append({"policy": n.policy_name, "reason": n.reason})


def preview(server: PackServer, plan: Plan) -> OnlineResult:
    """Drive one preview of ``plan`` through the pack, as the step generator does."""
    out = OnlineResult()
    resources = engine_resources(plan)
    for r in resources:
        response = server.remediate(r)
        for rem in response.remediations:
            if rem.diagnostic:
                out.not_evaluated.append({"policy": rem.policyName, "urn": r.urn, "reason": rem.diagnostic})
                continue
            r.inputs = unmarshal_properties(rem.properties)
            out.remediations.append({"policy": rem.policyName, "urn": r.urn, "properties": plain(r.inputs)})
        _collect(out, server.analyze(r), lambda _urn, urn=r.urn: urn)
        out.analyze_calls += 1
        r.outputs = preview_outputs(r)
    present = {r.urn for r in resources}
    root = resources[0].urn
    _collect(out, server.analyze_stack(resources), lambda urn: urn if urn in present else root)
    return out


def keys(items: Iterable[Mapping[str, Any]], *fields: str) -> set[tuple[Any, ...]]:
    return {tuple(i[f] for f in fields) for i in items}


@contextlib.contextmanager
def serve(
    plan_project: str,
    plan_stack: str,
    *,
    pack_dir: Path = PACK_DIR,
    python: str | None = None,
    config: Mapping[str, Any] | None = None,
    rpc_timeout: float = 60.0,
) -> Iterator[tuple[PackServer, list[PolicyInfo], dict[str, PolicyConfig]]]:
    """Start the pack, run the CLI's start-up calls and Configure with ``config`` (the --policy-pack-config
    JSON); yields (server, policies, the reconciled config). Invalid config raises OnlineError, as the CLI stops."""
    launch = launch_spec(pack_dir, project=plan_project, stack=plan_stack, python=python)
    server = PackServer(launch, rpc_timeout=rpc_timeout)
    with server:
        server.handshake()
        server.configure_stack(project=plan_project, stack=plan_stack)
        info = server.analyzer_info()
        server.plugin_info()
        policies = policy_infos(info)
        reconciled, errors = reconcile_config(policies, initial_config(info), parse_config_file(config or {}))
        if errors:
            raise OnlineError("invalid policy pack config: " + "; ".join(errors))
        server.configure(reconciled)
        yield server, policies, reconciled
