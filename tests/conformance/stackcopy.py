"""Plan a copy of a shipped stack with a defect put back, for the per-defect-class conformance tests.

The defect goes in through a Pulumi stack transformation (the SDK applies it to every resource's inputs before
registration, exactly where a hand edit of the component would have changed them), so the test exercises the
conformance check on the whole stack, not an assertion about the one field the defect touched.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pulumi

from gpucloud.plan import run_callable
from gpucloud.plan.engine import OFFLINE_STACK_REFERENCES_KEY, Project
from gpucloud.plan.model import Plan

ROOT = Path(__file__).resolve().parents[2]
Props = dict[str, Any]


def plan_stack(
    stack: str = "dev",
    *,
    program_dir: Path = ROOT,
    edit: Callable[[str, str, Props], Props | None] | None = None,
    config_overrides: Mapping[str, Any] | None = None,
) -> Plan:
    """Run a project's program for `stack`; `edit(type, name, props)` may return changed inputs for a resource."""
    project = Project(program_dir)
    config = project.config(stack)
    config.update(config_overrides or {})
    refs = config.pop(OFFLINE_STACK_REFERENCES_KEY, None) or {}

    def program() -> None:
        if edit is not None:

            def transform(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
                changed = edit(args.type_, args.name, dict(args.props))
                return None if changed is None else pulumi.ResourceTransformationResult(changed, args.opts)

            pulumi.runtime.register_stack_transformation(transform)
        runpy.run_path(str(project.main), run_name="__main__")

    return run_callable(
        program,
        project=project.name,
        stack=stack,
        config=config,
        region=str(config.get("aws:region") or "us-east-1"),
        stack_references=refs,
    )
