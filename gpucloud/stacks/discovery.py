"""Every stack of a repository, found from its Pulumi project files, with its StackReference dependencies.

A stack is a `Pulumi.<stack>.yaml` next to (or in the `stackConfigDir` of) a `Pulumi.yaml`. Its dependencies are
the stacks it reads through StackReference: the team spec's `platformStack` and the keys of
`gpucloud:offlineStackReferences` (what the offline plan answers those references with). A reference names
`[<org>/]<project>/<stack>` or just `<stack>` (the same project); the org is ignored when matching, because one
repository's stacks can live under any org (`organization` on a DIY backend, the team's org on Pulumi Cloud).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpucloud import package_data
from gpucloud.plan.engine import OFFLINE_STACK_REFERENCES_KEY, PlanInputError, Project

# Directories never searched for projects: test fixtures and vendored upstream code hold Pulumi.yaml files that
# are not this repository's stacks; virtualenvs and caches hold other people's code.
SKIPPED_DIRS = frozenset({"tests", "vendor", "node_modules", "__pycache__", "site-packages"})
SPEC_KEYS = ("gpucloud:platform", "gpucloud:team")
POLICY_CONFIG_DIR = Path("policies") / "configs"


class StackDiscoveryError(PlanInputError):
    """A repository whose stacks cannot be ordered (a reference cycle)."""


@dataclass(frozen=True)
class StackInfo:
    """One stack of one project, with paths relative to the repository root."""

    project: str
    stack: str
    program: str
    stack_file: str
    environment: str | None = None
    references: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = field(default=())

    @property
    def id(self) -> str:
        return f"{self.project}/{self.stack}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "project": self.project,
            "stack": self.stack,
            "program": self.program,
            "stack_file": self.stack_file,
            "environment": self.environment,
            "references": list(self.references),
            "depends_on": list(self.depends_on),
        }


def find_projects(root: Path) -> list[Path]:
    """Directories under `root` holding a Pulumi.yaml (or .yml), sorted; hidden, skipped and venv dirs pruned."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and d not in SKIPPED_DIRS and not (Path(dirpath, d) / "pyvenv.cfg").exists()
        )
        if "Pulumi.yaml" in filenames or "Pulumi.yml" in filenames:
            found.append(Path(dirpath))
    return sorted(found)


def spec_of(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The stack's gpucloud spec object (platform or team), or {} when it has none or it is not a mapping."""
    for key in SPEC_KEYS:
        value = config.get(key)
        if isinstance(value, Mapping):
            return value
    return {}


def references_of(config: Mapping[str, Any]) -> tuple[str, ...]:
    """StackReference names the stack reads, in first-seen order without repeats."""
    names: list[str] = []
    team = config.get("gpucloud:team")
    if isinstance(team, Mapping) and isinstance(team.get("platformStack"), str):
        names.append(team["platformStack"])
    offline = config.get(OFFLINE_STACK_REFERENCES_KEY)
    if isinstance(offline, Mapping):
        names.extend(str(k) for k in offline)
    return tuple(dict.fromkeys(names))


def split_reference(name: str, own_project: str) -> tuple[str, str]:
    """(project, stack) a StackReference name points at: `stack`, `project/stack` or `org/project/stack`."""
    parts = name.split("/")
    if len(parts) == 1:
        return own_project, parts[0]
    return parts[-2], parts[-1]


def _relative(path: Path, root: Path) -> str:
    rel = os.path.relpath(path, root)
    return "." if rel == "." else rel.replace(os.sep, "/")


def discover(root: Path) -> list[StackInfo]:
    """Every stack under `root` in dependency order (see order()); raises PlanInputError on a broken project."""
    root = root.resolve()
    raw: list[StackInfo] = []
    for directory in find_projects(root):
        project = Project(directory)
        for stack in project.stacks():
            config = project.config(stack)
            env = spec_of(config).get("environment")
            raw.append(
                StackInfo(
                    project=project.name,
                    stack=stack,
                    program=_relative(project.dir, root),
                    stack_file=_relative(project.stack_file(stack), root),
                    environment=env if isinstance(env, str) else None,
                    references=references_of(config),
                )
            )
    return order(link(raw))


def link(stacks: Sequence[StackInfo]) -> list[StackInfo]:
    """Resolve each stack's references to the ids of stacks in the set; references outside it are external."""
    ids = {s.id for s in stacks}
    out = []
    for s in stacks:
        deps = []
        for ref in s.references:
            target = "/".join(split_reference(ref, s.project))
            if target in ids and target != s.id and target not in deps:
                deps.append(target)
        out.append(StackInfo(s.project, s.stack, s.program, s.stack_file, s.environment, s.references, tuple(deps)))
    return out


def order(stacks: Sequence[StackInfo]) -> list[StackInfo]:
    """Dependencies before dependents; among stacks ready at the same time, by (program, stack) so the order is
    the same on every machine. A cycle is an error naming the stacks in it."""
    by_id = {s.id: s for s in stacks}
    pending = {s.id: {d for d in s.depends_on if d in by_id} for s in stacks}
    done: list[StackInfo] = []
    while pending:
        ready = sorted((by_id[i] for i, deps in pending.items() if not deps), key=lambda s: (s.program, s.stack))
        if not ready:
            cycle = ", ".join(sorted(pending))
            raise StackDiscoveryError(
                f"stack references form a cycle among {cycle}: a stack cannot read outputs of a stack that reads "
                "its own; fix platformStack / gpucloud:offlineStackReferences in one of their stack files"
            )
        for s in ready:
            done.append(s)
            del pending[s.id]
        for deps in pending.values():
            deps.difference_update(s.id for s in ready)
    return done


def find_policy_configs(start: Path, cwd: Path | None = None) -> Path | None:
    """The nearest `policies/configs` directory at or above `start` (the program), else under `cwd`."""
    start = start.resolve()
    for directory in (start, *start.parents):
        candidate = directory / POLICY_CONFIG_DIR
        if candidate.is_dir():
            return candidate
    fallback = (cwd or Path.cwd()) / POLICY_CONFIG_DIR
    return fallback if fallback.is_dir() else None


def policy_config_for(
    program: Path, stack: str, environment: str | None, cwd: Path | None = None, *, shipped: Path | None = None
) -> Path | None:
    """The policy config a stack is judged by: `<stack>.json`, else its spec environment's `<environment>.json`,
    from the repository's `policies/configs` (find_policy_configs); else the config gpucloud ships for that
    environment (`shipped`, default gpucloud/policies/configs: dev, staging, prod). So a team stack in its own
    repository is judged by its environment's config by default, and its own file overrides it. The shipped
    configs are per environment, so only the spec's validated `environment` selects one, never a stack name."""
    configs = find_policy_configs(program, cwd)
    for name in (stack, environment):
        if configs is not None and name and (configs / f"{name}.json").is_file():
            return configs / f"{name}.json"
    shipped = shipped if shipped is not None else package_data.POLICY_CONFIGS
    if environment and (shipped / f"{environment}.json").is_file():
        return shipped / f"{environment}.json"
    return None
