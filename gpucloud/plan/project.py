"""A Pulumi project directory as the Pulumi CLI reads it: Pulumi.yaml, its stack files and their config."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gpucloud.fileio import decode_text

OFFLINE_STACK_REFERENCES_KEY = "gpucloud:offlineStackReferences"


class PlanInputError(Exception):
    """Invalid input to a plan: unknown stack, bad project file, invalid spec, or a program that raised.

    The CLI prints str(error) and exits 2; no traceback.
    """


# libyaml's parser when PyYAML was built with it (the wheels are): the prod stack file parses in 2 ms, not 18.
_YAML_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DuplicateKeyLoader(_YAML_BASE):
    """A safe loader that rejects a mapping with the same key twice. PyYAML keeps the last one silently; the
    Pulumi CLI (Go yaml.v3) refuses such a file ("mapping key already defined"), so a plan must too."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the base constructor reports it
                continue
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {first.start_mark.line + 1}); keep one of them",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


# The Pulumi CLI (Go yaml.v3) reads an unquoted date such as `2026-07-01` into a config value as the string it
# was written as; PyYAML would make it a datetime.date, which no config value can be.
DuplicateKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)

_YAML_LOADER: Any = DuplicateKeyLoader


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_YAML_LOADER)  # a safe loader either way


def _read_yaml_file(path: Path) -> Any:
    """A project or stack file's YAML, or PlanInputError naming the file and the problem (unreadable, binary,
    not UTF-8, not YAML)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PlanInputError(f"{path}: cannot read it ({exc.strerror}); check its permissions") from None
    try:
        return _load_yaml(decode_text(data, str(path), PlanInputError))
    except yaml.YAMLError as exc:
        raise PlanInputError(_yaml_problem(path, exc)) from None


def _config_section(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The `config:` mapping of a project or stack file, checked to be what the Pulumi CLI accepts."""
    section = data.get("config")
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise PlanInputError(
            f"{path}: config: must be a mapping of keys to values, got a YAML {_yaml_kind(section)}; write it as "
            "`config:` followed by indented `key: value` lines (no leading `- `)"
        )
    for key in section:
        if not isinstance(key, str):
            raise PlanInputError(f"{path}: config: key {key!r} is not a string; quote it or name it like `ns:key`")
    return section


def _yaml_kind(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "value")


def _yaml_problem(path: Path, exc: yaml.YAMLError) -> str:
    """One line per YAML error: file:line: what, without PyYAML's multi-line context dump."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    return f"{where}: not valid YAML: {problem}"


class Project:
    """A Pulumi project directory: Pulumi.yaml, its program, and its stack files."""

    def __init__(self, program_dir: Path) -> None:
        self.dir = program_dir.resolve()
        project_file = next((self.dir / n for n in ("Pulumi.yaml", "Pulumi.yml") if (self.dir / n).is_file()), None)
        if project_file is None:
            raise PlanInputError(f"{self.dir} is not a Pulumi project: no Pulumi.yaml found there")
        data = _read_yaml_file(project_file) or {}
        if not isinstance(data, dict) or not data.get("name"):
            raise PlanInputError(f"{project_file}: needs a 'name' (the project name)")
        runtime = data.get("runtime")
        runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
        if runtime is None:
            raise PlanInputError(
                f"{project_file}: runtime: missing (the Pulumi CLI requires it); allowed: python. Fix: add "
                "`runtime: python` (or `runtime: {name: python, options: {toolchain: pip, virtualenv: venv}}`)"
            )
        if runtime_name != "python":
            raise PlanInputError(
                f"{project_file}: runtime.name: {runtime_name!r} is not supported; allowed: python (gpucloud plan "
                "runs Python programs only). Fix: plan a Python project, or preview this one with the Pulumi CLI"
            )
        self.file = project_file
        self.name: str = str(data["name"])
        self.data: dict[str, Any] = data
        main = Path(str(data.get("main") or "."))
        main_path = self.dir / main
        self.main = main_path / "__main__.py" if main_path.is_dir() else main_path
        if not self.main.is_file():
            raise PlanInputError(f"{project_file}: program entry {self.main} does not exist")
        self.stack_dir = self.dir / str(data.get("stackConfigDir") or ".")

    def stacks(self) -> list[str]:
        names = []
        for p in sorted(self.stack_dir.glob("Pulumi.*.y*ml")):
            parts = p.name.split(".")
            if len(parts) == 3 and parts[0] == "Pulumi":
                names.append(parts[1])
        return names

    def stack_file(self, stack: str) -> Path:
        for ext in ("yaml", "yml"):
            candidate = self.stack_dir / f"Pulumi.{stack}.{ext}"
            if candidate.is_file():
                return candidate
        available = ", ".join(self.stacks()) or "none"
        raise PlanInputError(
            f"unknown stack '{stack}' for project '{self.name}': no Pulumi.{stack}.yaml in {self.stack_dir} "
            f"(available stacks: {available})"
        )

    def config(self, stack: str) -> dict[str, Any]:
        """Project defaults then the stack file, keys namespaced as the Pulumi CLI does."""
        merged: dict[str, Any] = {}
        for key, decl in _config_section(self.data, self.file).items():
            full = self._qualify(key)
            if isinstance(decl, dict):
                if "value" in decl:
                    merged[full] = decl["value"]
                elif "default" in decl:
                    merged[full] = decl["default"]
            else:
                merged[full] = decl
        stack_file = self.stack_file(stack)
        data = _read_yaml_file(stack_file) or {}
        if not isinstance(data, dict):
            raise PlanInputError(f"{stack_file}: must be a mapping with a 'config' key")
        for key, value in _config_section(data, stack_file).items():
            merged[self._qualify(key)] = value
        return merged

    def _qualify(self, key: str) -> str:
        return key if ":" in key else f"{self.name}:{key}"


def config_strings(config: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            # Ciphertext needs the stack's secrets provider; offline the value is a placeholder.
            out[key] = "offline-secret-placeholder"
        elif isinstance(value, str):
            out[key] = value
        else:
            out[key] = json.dumps(value)
    return out
