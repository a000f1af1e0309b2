"""`gpucloud upgrade --stack NAME --to MINOR`: the ordered upgrade steps of a platform stack, each a stack spec."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_CONFORMANCE, EXIT_OK, CliError
from gpucloud.cli.io import write_output


def register(sub: Any) -> None:
    p = sub.add_parser(
        "upgrade",
        help="the ordered steps to move a platform stack to a newer Kubernetes minor",
        description="Print the upgrade path of a platform stack: per minor, the control plane, the EKS add-ons, the "
        "system nodes and each GPU pool (least disruptive first), with the stack-spec change of each step and what "
        "its `pulumi up` disrupts. With --verify every step's spec is planned offline (exit 5 when one would not "
        "hold). See docs/upgrades.md.",
    )
    p.add_argument("--stack", default="dev", help="stack name (default: dev)")
    p.add_argument("--program", default=".", help="the Pulumi project directory (default: the current directory)")
    p.add_argument("--to", required=True, metavar="MINOR", help="target Kubernetes minor, e.g. 1.36")
    p.add_argument("--verify", action="store_true", help="plan every step's spec offline and report its verdict")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--out", default=None, metavar="FILE", help="write the report to FILE")
    p.set_defaults(func=run)


def _stack_spec(program: Path, stack: str) -> dict[str, Any]:
    from gpucloud.plan.engine import Project

    project = Project(program)
    if stack not in project.stacks():
        raise CliError(f"--stack {stack}: no stack file for it; stacks of {program}: {', '.join(project.stacks())}")
    spec = project.config(stack).get("gpucloud:platform")
    if not isinstance(spec, dict):
        raise CliError(
            f"--stack {stack}: its stack file has no gpucloud:platform object (only platform stacks upgrade)"
        )
    return spec


def run(args: argparse.Namespace) -> int:
    from gpucloud.spec import SpecError
    from gpucloud.upgrade import SCHEMA, UpgradeError, plan_steps, upgrade_path

    program = Path(args.program)
    if not program.is_dir():
        raise CliError(f"--program {args.program} is not a directory")
    doc = _stack_spec(program, args.stack)
    target = str(args.to).strip()
    try:
        steps = upgrade_path(doc, target)
    except UpgradeError as exc:
        raise CliError(str(exc)) from None
    except SpecError as exc:
        raise CliError(str(exc)) from None
    if args.verify:
        plan_steps(steps, program, args.stack)
    current = str((doc.get("cluster") or {}).get("kubernetesVersion"))
    report = {
        "schema": SCHEMA,
        "stack": args.stack,
        "from": current,
        "to": target,
        "steps": [s.to_json() for s in steps],
    }
    text = json.dumps(report, indent=2) + "\n" if args.format == "json" else render_text(report)
    write_output(text, args.out)
    failed = any((s.plan or {}).get("conformance_errors") for s in steps)
    return EXIT_CONFORMANCE if failed else EXIT_OK


def _shown(value: Any) -> str:
    return "(default)" if value is None else json.dumps(value)


def render_text(report: dict[str, Any]) -> str:
    steps = report["steps"]
    if not steps:
        return f"Stack {report['stack']} already runs Kubernetes {report['to']}: nothing to upgrade.\n"
    lines = [
        f"Upgrade of stack {report['stack']}: Kubernetes {report['from']} -> {report['to']}, {len(steps)} steps, one "
        "`pulumi up` each, in this order.",
        "",
    ]
    for s in steps:
        lines.append(f"Step {s['step']}: {s['title']}")
        lines.append("  stack spec (gpucloud:platform):")
        for c in s["changes"]:
            lines.append(f"    {c['path']}: {_shown(c['before'])} -> {_shown(c['after'])}")
        lines.append("  disrupts:")
        lines.extend(f"    - {d}" for d in s["disrupts"])
        if s.get("plan") is not None:
            plan = s["plan"]
            verdict = "PASS" if not plan["conformance_errors"] else "FAIL"
            lines.append(
                f"  plan: {verdict}  {plan['conformance_errors']} conformance errors, "
                f"{plan['conformance_warnings']} warnings, {plan['resources']} resources"
            )
            lines.extend(f"    ! {e}" for e in plan["errors"])
        lines.append("")
    return "\n".join(lines)
