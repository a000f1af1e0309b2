"""What `gpucloud plan` for one stack and for many stacks (cli/plan_all.py) share: the mix horizon, the policy
config a stack is judged by, the exit code of a report and its SARIF log."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_CONFORMANCE, EXIT_OK, EXIT_VIOLATIONS, CliError
from gpucloud.cli.io import read_json


def timeout_arg(value: str) -> float:
    """argparse type of --timeout: a number of seconds above 0."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds above 0; give e.g. --timeout 120")
    return seconds


def horizon_arg(value: str) -> float:
    """argparse type of --mix-horizon: a positive number of months."""
    from gpucloud.advisor.plan_advice import MixHorizonError, validate_horizon

    try:
        return validate_horizon(float(value))
    except MixHorizonError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of months; give e.g. --mix-horizon 12") from None


def mix_horizon(args: argparse.Namespace) -> float | None:
    """The horizon the plan's mix advice uses, None with --no-mix-advice."""
    from gpucloud.advisor.plan_advice import DEFAULT_HORIZON_MONTHS

    horizon = getattr(args, "mix_horizon", None)
    if getattr(args, "no_mix_advice", False):
        if horizon is not None:
            raise CliError("--mix-horizon and --no-mix-advice contradict each other; give one of them")
        return None
    return DEFAULT_HORIZON_MONTHS if horizon is None else float(horizon)


def resolve_policy_config(args: argparse.Namespace, program: Path, stack: str) -> tuple[dict[str, Any] | None, str]:
    """The policy config to judge a stack by and where it came from (a path, or why there is none)."""
    from gpucloud.plan.engine import Project
    from gpucloud.stacks.discovery import policy_config_for, spec_of

    if args.policy_config and args.no_policy_config:
        raise CliError("--policy-config and --no-policy-config contradict each other; give one of them")
    if args.no_policy_config:
        return None, "none (--no-policy-config)"
    if args.policy_config:
        path: Path | None = Path(args.policy_config)
    else:
        environment = spec_of(Project(program).config(stack)).get("environment")
        path = policy_config_for(program, stack, environment if isinstance(environment, str) else None)
        if path is None:
            return None, "none (no policies/configs/<stack>.json or <environment>.json)"
    assert path is not None
    config = read_json(str(path), "--policy-config")
    if not isinstance(config, dict):
        raise CliError(f"--policy-config {path} must hold a JSON object keyed by policy name")
    return config, _shown(path)


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def exit_code(report: dict[str, Any]) -> int:
    """5 when the plan would not hold against upstream (it wins: nothing else matters if it cannot apply),
    1 on mandatory guardrail violations or undeclared data replaced by the change (--compare), else 0."""
    if (report.get("conformance") or {}).get("errors", 0):
        return EXIT_CONFORMANCE
    if (report.get("change_impact") or {}).get("blocking", 0):
        return EXIT_VIOLATIONS  # data replaced or deleted that the stack does not declare (docs/change-impact.md)
    return EXIT_VIOLATIONS if report["policies"].get("mandatory_violations", 0) else EXIT_OK


def sarif_log(report: dict[str, Any], artifact_uri: str = "Pulumi.yaml") -> dict[str, Any]:
    from gpucloud.report.sarif import to_sarif

    return to_sarif(report, artifact_uri=artifact_uri)
