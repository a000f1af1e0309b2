"""Runs any Pulumi Python program in-process under a recording mock runtime and returns the recorded plan."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import runpy
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from gpucloud.plan import lazy_sdk
from gpucloud.plan.model import UNKNOWN, Plan, ResourceRecord
from gpucloud.plan.offline import OfflineAnswers, fake_id
from gpucloud.plan.wire import struct_to_engine_view
from gpucloud.spec.errors import SpecError

STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference"
OFFLINE_STACK_REFERENCES_KEY = "gpucloud:offlineStackReferences"
DEFAULT_REGION = "us-east-1"


class PlanInputError(Exception):
    """Invalid input to a plan: unknown stack, bad project file, invalid spec, or a program that raised.

    The CLI prints str(error) and exits 2; no traceback.
    """


# libyaml's parser when PyYAML was built with it (the wheels are): the prod stack file parses in 2 ms, not 18.
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_YAML_LOADER)  # a safe loader either way


class Project:
    """A Pulumi project directory: Pulumi.yaml, its program, and its stack files."""

    def __init__(self, program_dir: Path) -> None:
        self.dir = program_dir.resolve()
        project_file = next((self.dir / n for n in ("Pulumi.yaml", "Pulumi.yml") if (self.dir / n).is_file()), None)
        if project_file is None:
            raise PlanInputError(f"{self.dir} is not a Pulumi project: no Pulumi.yaml found there")
        try:
            data = _load_yaml(project_file.read_text()) or {}
        except yaml.YAMLError as exc:
            raise PlanInputError(f"{project_file}: not valid YAML ({exc})") from None
        if not isinstance(data, dict) or not data.get("name"):
            raise PlanInputError(f"{project_file}: needs a 'name' (the project name)")
        runtime = data.get("runtime")
        runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
        if runtime_name != "python":
            raise PlanInputError(
                f"{project_file}: runtime is {runtime_name!r}; gpucloud plan runs Python programs only"
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
        for key, decl in (self.data.get("config") or {}).items():
            full = self._qualify(key)
            if isinstance(decl, dict):
                if "value" in decl:
                    merged[full] = decl["value"]
                elif "default" in decl:
                    merged[full] = decl["default"]
            else:
                merged[full] = decl
        stack_file = self.stack_file(stack)
        try:
            data = _load_yaml(stack_file.read_text()) or {}
        except yaml.YAMLError as exc:
            raise PlanInputError(f"{stack_file}: not valid YAML ({exc})") from None
        if not isinstance(data, dict):
            raise PlanInputError(f"{stack_file}: must be a mapping with a 'config' key")
        for key, value in (data.get("config") or {}).items():
            merged[self._qualify(key)] = value
        return merged

    def _qualify(self, key: str) -> str:
        return key if ":" in key else f"{self.name}:{key}"


def _config_strings(config: Mapping[str, Any]) -> dict[str, str]:
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


def _make_mocks(answers: OfflineAnswers) -> Any:
    import pulumi

    class OfflineMocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
            if args.typ == STACK_REFERENCE_TYPE:
                name = str(args.inputs.get("name", args.name))
                outputs = answers.stack_references.get(name)
                if outputs is None:
                    answers.unanswered.append(f"StackReference {name}")
                    outputs = {}
                return name, {**args.inputs, "name": name, "outputs": dict(outputs), "secretOutputNames": []}
            # As in a preview: outputs are the inputs; computed ones (ids, ARNs) stay unknown.
            return None, dict(args.inputs)

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict[Any, Any]:  # type: ignore[override]
            # A plain dict: the SDK's own type hint suggests (dict, None), which its MockMonitor cannot unpack.
            return answers.answer(args.token, dict(args.args))

    return OfflineMocks()


def _make_monitor(mocks: Any, records: list[ResourceRecord]) -> Any:
    from pulumi.runtime.mocks import MockMonitor

    class RecordingMonitor(MockMonitor):
        def make_urn(self, parent: str, type_: str, name: str) -> str:
            # As the engine builds URNs: a child's type is qualified by its parent's whole qualified type,
            # except that children of the root stack are not qualified at all.
            from pulumi.runtime.settings import get_project, get_stack

            if parent:
                parent_type = parent.split("::")[2]
                if parent_type != "pulumi:pulumi:Stack":
                    type_ = f"{parent_type}${type_}"
            return f"urn:pulumi:{get_stack()}::{get_project()}::{type_}::{name}"

        def RegisterResource(self, request: Any) -> Any:
            response = super().RegisterResource(request)
            if request.type != "pulumi:pulumi:Stack":
                records.append(
                    ResourceRecord(
                        urn=response.urn,
                        type=request.type,
                        name=request.name,
                        parent=request.parent or None,
                        custom=bool(request.custom),
                        # The SDK gathers dependencies in sets, so their order follows string hashing and
                        # changes from run to run; sorted, two plans of the same program compare equal.
                        dependencies=sorted(request.dependencies),
                        inputs=struct_to_engine_view(request.object),
                        property_dependencies={
                            k: sorted(v.urns) for k, v in sorted(request.propertyDependencies.items())
                        },
                        provider=request.provider or None,
                        protect=bool(request.protect),
                        retain_on_delete=bool(request.retainOnDelete),
                        ignore_changes=list(request.ignoreChanges),
                        deleted_with=request.deletedWith or None,
                    )
                )
            return response

    return RecordingMonitor(mocks)


_LIBRARY_ROOT = Path(__file__).resolve().parents[2]


def _user_frame(exc: BaseException, program_dir: Path) -> str | None:
    """The deepest traceback frame in user code: the program's directory or gpucloud's own components.

    Frames in the SDK, the standard library and the plan engine itself say nothing about what to fix.
    """
    best: str | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        if not path.is_absolute() or "site-packages" in path.parts:
            continue
        path = path.resolve()
        if path.is_relative_to(_LIBRARY_ROOT / "gpucloud" / "plan"):
            continue
        if path.is_relative_to(program_dir):
            best = f"{path.relative_to(program_dir)}:{frame.lineno}"
        elif path.is_relative_to(_LIBRARY_ROOT):
            best = f"{path.relative_to(_LIBRARY_ROOT)}:{frame.lineno}"
    return best


def run_program(
    program_dir: str | Path,
    stack: str = "dev",
    *,
    preview: bool = True,
    config_overrides: Mapping[str, Any] | None = None,
) -> Plan:
    """Run a Pulumi Python project's program offline and record every resource it registers.

    Each call gets a fresh context, event loop and mock monitor, so programs can be planned repeatedly
    in one process.
    """
    project = Project(Path(program_dir))
    config = project.config(stack)
    config.update(config_overrides or {})
    region = str(config.get("aws:region") or DEFAULT_REGION)
    if isinstance(config.get("aws:region"), dict):
        region = DEFAULT_REGION
    refs = config.pop(OFFLINE_STACK_REFERENCES_KEY, None) or {}
    if not isinstance(refs, dict):
        raise PlanInputError(f"{OFFLINE_STACK_REFERENCES_KEY} must map stack names to their outputs")
    answers = OfflineAnswers(region, refs)
    records: list[ResourceRecord] = []

    def program() -> None:
        runpy.run_path(str(project.main), run_name="__main__")

    ctx = contextvars.Context()
    return ctx.run(
        _run_in_context, project.name, project.dir, project.main, program, stack, config, answers, records, preview
    )


def run_callable(
    fn: Callable[[], Any],
    *,
    project: str = "gpucloud",
    stack: str = "test",
    config: Mapping[str, Any] | None = None,
    preview: bool = True,
    region: str = DEFAULT_REGION,
    stack_references: Mapping[str, Mapping[str, Any]] | None = None,
) -> Plan:
    """Run a Python callable that creates resources (a component test, a benchmark) like a program.

    `preview=False` gives update semantics (computed outputs resolve to None) for value assertions.
    """
    cfg = {"aws:region": region, **(config or {})}
    answers = OfflineAnswers(str(cfg["aws:region"]), stack_references)
    records: list[ResourceRecord] = []
    here = Path.cwd()
    ctx = contextvars.Context()
    return ctx.run(_run_in_context, project, here, here, fn, stack, cfg, answers, records, preview)


def _run_in_context(
    project_name: str,
    project_dir: Path,
    main: Path,
    program: Callable[[], Any],
    stack: str,
    config: dict[str, Any],
    answers: OfflineAnswers,
    records: list[ResourceRecord],
    preview: bool,
) -> Plan:
    import pulumi
    from pulumi.runtime import settings
    from pulumi.runtime.stack import run_pulumi_func

    # Offline plans load only the provider SDK modules the program uses (see lazy_sdk); same names, same objects.
    lazy_sdk.install()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    restore_stack_traces = _skip_source_positions()
    previous_cwd = os.getcwd()
    added_path = str(project_dir)
    modules_before = set(sys.modules)
    # The SDK logs resource errors through the engine logger before re-raising; the CLI reports them once.
    quiet = logging.getLogger("gpucloud.plan.engine")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    try:
        settings.ROOT.set(None)
        mocks = _make_mocks(answers)
        monitor = _make_monitor(mocks, records)
        pulumi.runtime.set_mocks(
            mocks, project=project_name, stack=stack, preview=preview, monitor=monitor, logger=quiet
        )
        # set_mocks leaves the set of pending outputs alone; a program that failed earlier in this process left
        # tasks of its (closed) loop there, and the SDK would wait on them.
        settings.SETTINGS.outputs = set()
        pulumi.runtime.set_all_config(_config_strings(config))
        sys.path.insert(0, added_path)
        os.chdir(project_dir)
        root = settings.get_root_resource()
        try:
            loop.run_until_complete(run_pulumi_func(program))
        except SpecError as exc:
            raise PlanInputError(str(exc)) from None
        except PlanInputError:
            raise
        except Exception as exc:
            where = _user_frame(exc, project_dir) or main.name
            hint = "".join(
                f"; the offline plan has no outputs for {t} (give them under {OFFLINE_STACK_REFERENCES_KEY} in the "
                "stack file)"
                for t in answers.unanswered
                if t.startswith("StackReference ")
            )
            raise PlanInputError(f"program error in {where}: {type(exc).__name__}: {exc}{hint}") from None
        outputs = _stack_outputs(root)
    finally:
        restore_stack_traces()
        os.chdir(previous_cwd)
        if added_path in sys.path:
            sys.path.remove(added_path)
        _forget_program_modules(modules_before, project_dir)
        _drain(loop)
        loop.close()
        asyncio.set_event_loop(None)
    # The SDK registers resources from executor threads, so arrival order varies between runs; URN order
    # makes plans diffable (--compare) and reproducible.
    records.sort(key=lambda r: r.urn)
    warnings = [f"offline plan has no answer for {t}; its results are empty" for t in answers.unanswered]
    return Plan(
        project=project_name,
        stack=stack,
        resources=records,
        outputs=outputs,
        warnings=warnings,
        program_dir=str(project_dir),
        config=config,
    )


def _skip_source_positions() -> Callable[[], None]:
    """Stop the SDK from capturing a Python stack trace per resource while planning offline.

    The engine uses those traces only to show source positions in the Pulumi console; the offline plan never
    sends them anywhere, and extracting them (with source lines) costs ~0.3 s on a 200-resource stack.
    Returns the function that puts the SDK's own implementation back.
    """
    from pulumi.runtime import resource as sdk_resource
    from pulumi.runtime.proto import source_pb2

    original = getattr(sdk_resource, "_get_stack_trace", None)
    if original is None:  # a later SDK reorganised this; planning still works, only slower
        return lambda: None
    sdk_resource._get_stack_trace = source_pb2.StackTrace

    def restore() -> None:
        sdk_resource._get_stack_trace = original

    return restore


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Finish everything a run left behind, so a failed program cannot break the next plan in this process.

    After a program error the SDK still has RPCs in executor threads and outputs waiting on them; closing the
    loop under them makes the next run fail with "Event loop is closed".
    """
    # Failed outputs that nobody awaits would otherwise be printed by asyncio at garbage collection.
    loop.set_exception_handler(lambda _loop, _context: None)
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_default_executor())


def _stack_outputs(root: Any) -> dict[str, Any]:
    """Exports that are plain values at preview; anything computed shows as unknown."""
    if root is None:
        return {}
    out: dict[str, Any] = {}
    for key, value in getattr(root, "outputs", {}).items():
        out[key] = value if _plain(value) else UNKNOWN
    return out


def _plain(value: Any) -> bool:
    if isinstance(value, str | int | float | bool | type(None)):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


# gpucloud's own packages live in the repository root, which is also the root program's directory; they are
# libraries, not program modules, and re-importing them per plan would only cost time.
_LIBRARY_PACKAGES = ("gpucloud", "components", "policies")


def _forget_program_modules(before: set[str], program_dir: Path) -> None:
    # A program's own helper modules must not leak into the next program planned in this process. A string
    # prefix test, not Path.resolve(): a plan imports about a thousand modules and resolving each costs ~0.2 s.
    prefix = str(program_dir) + os.sep
    for name in set(sys.modules) - before:
        if name.split(".")[0] in _LIBRARY_PACKAGES:
            continue
        file = getattr(sys.modules.get(name), "__file__", None)
        if file and os.path.abspath(file).startswith(prefix) and "site-packages" not in file:
            del sys.modules[name]


__all__ = ["PlanInputError", "Project", "fake_id", "run_callable", "run_program"]
