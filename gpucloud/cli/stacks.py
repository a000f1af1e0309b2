"""`gpucloud stacks`: every stack of the repository, in dependency order, with what it references."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpucloud.cli.errors import EXIT_OK, CliError

if TYPE_CHECKING:
    from gpucloud.stacks.discovery import StackInfo


def register(sub: Any) -> None:
    p = sub.add_parser(
        "stacks",
        help="list the repository's stacks and their StackReference dependencies",
        description="Find every Pulumi project under the root (Pulumi.yaml plus Pulumi.<stack>.yaml files; "
        "tests/, vendor/, hidden and virtualenv directories skipped) and list its stacks in dependency order, "
        "the order `gpucloud plan --all` plans them in.",
    )
    p.add_argument("--root", default=".", help="repository root (default: .)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--changed", metavar="BASE", help="only the stacks `git diff BASE` can affect")
    p.add_argument("--shard", metavar="I/N", help="only shard I of N")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpucloud.cli.plan_all import select_stacks

    if not Path(args.root).is_dir():
        raise CliError(f"--root {args.root} is not a directory")
    _, stacks = select_stacks(args)
    if args.format == "json":
        print(json.dumps({"stacks": [_with_policy_config(s, Path(args.root)) for s in stacks]}, indent=2))
        return EXIT_OK
    rows = [("stack", "program", "stack file", "environment", "depends on", "references")]
    for s in stacks:
        deps = ", ".join(s.depends_on) or "-"
        rows.append((s.id, s.program, s.stack_file, s.environment or "-", deps, ", ".join(s.references) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return EXIT_OK


def _with_policy_config(info: StackInfo, root: Path) -> dict[str, Any]:
    """The stack's JSON plus the policy config `gpucloud plan` judges it by (relative to the root, or null), so
    that a CI matrix built from this list runs `pulumi preview --policy-pack` with the same config."""
    from gpucloud.stacks.discovery import policy_config_for

    path = policy_config_for(root / info.program, info.stack, info.environment, cwd=root)
    out = info.to_json()
    out["policy_config"] = None
    if path is not None:
        try:
            out["policy_config"] = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:  # a config above the root: only its absolute path names it
            out["policy_config"] = str(path.resolve())
    return out
