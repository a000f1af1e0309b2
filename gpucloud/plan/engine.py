"""Runs any Pulumi Python program in-process under a recording mock runtime and returns the recorded plan.

Here: one run (a fresh context, event loop and monitor; the deadline; the program's errors as bad input) and the
stack outputs it resolves. The project and stack files are read by project.py, the mocks and the recording monitor
that registrations and invokes go through are monitor.py.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import re
import runpy
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from gpucloud.plan import lazy_sdk, options, threads
from gpucloud.plan.deadline import Deadline, PlanTimeout, TimeoutSettingError, resolve_timeout
from gpucloud.plan.model import SECRET, UNKNOWN_OUTPUT, Plan, ResourceRecord, unknown_marker
from gpucloud.plan.monitor import (
    STACK_REFERENCE_TYPE,
    PlanLog,
    derived_outputs,
    make_mocks,
    make_monitor,
    stack_reference_outputs,
)
from gpucloud.plan.offline import OfflineAnswers, fake_id
from gpucloud.plan.project import OFFLINE_STACK_REFERENCES_KEY, PlanInputError, Project, config_strings
from gpucloud.spec.errors import SpecError

DEFAULT_REGION = "us-east-1"
# The org a DIY (local, S3, ...) backend gives every stack; the offline plan is a DIY-like run.
OFFLINE_ORGANIZATION = "organization"


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
    timeout: float | None = None,
) -> Plan:
    """Run a Pulumi Python project's program offline and record every resource it registers.

    Each call gets a fresh context, event loop and mock monitor, so programs can be planned repeatedly
    in one process. `timeout` (seconds; default GPUCLOUD_PLAN_TIMEOUT, else 120) bounds the whole run: a program
    still waiting then is bad input (PlanInputError naming what it waited for).
    """
    project = Project(Path(program_dir))
    config = project.config(stack)
    config.update(config_overrides or {})
    region = str(config.get("aws:region") or DEFAULT_REGION)
    if isinstance(config.get("aws:region"), dict):
        region = DEFAULT_REGION
    stack_refs = config.pop(OFFLINE_STACK_REFERENCES_KEY, None) or {}
    if not isinstance(stack_refs, dict):
        raise PlanInputError(f"{OFFLINE_STACK_REFERENCES_KEY} must map stack names to their outputs")
    answers = OfflineAnswers(region, stack_refs)
    records: list[ResourceRecord] = []

    def program() -> None:
        runpy.run_path(str(project.main), run_name="__main__")

    ctx = contextvars.Context()
    stack_file = project.stack_file(stack)
    plan: Plan = ctx.run(
        _run_in_context,
        project.name,
        project.dir,
        project.main,
        program,
        stack,
        config,
        answers,
        records,
        preview,
        _shown_path(stack_file),
        timeout,
    )
    plan.stack_file = _shown_path(stack_file)
    return plan


def _shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is below it (what a user types), else absolute."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def run_callable(
    fn: Callable[[], Any],
    *,
    project: str = "gpucloud",
    stack: str = "test",
    config: Mapping[str, Any] | None = None,
    preview: bool = True,
    region: str = DEFAULT_REGION,
    stack_references: Mapping[str, Mapping[str, Any]] | None = None,
    timeout: float | None = None,
) -> Plan:
    """Run a Python callable that creates resources (a component test, a benchmark) like a program.

    `preview=False` gives update semantics (computed outputs resolve to None) for value assertions.
    """
    cfg = {"aws:region": region, **(config or {})}
    answers = OfflineAnswers(str(cfg["aws:region"]), stack_references)
    records: list[ResourceRecord] = []
    here = Path.cwd()
    ctx = contextvars.Context()
    return ctx.run(_run_in_context, project, here, here, fn, stack, cfg, answers, records, preview, "", timeout)


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
    stack_file: str = "",
    timeout: float | None = None,
) -> Plan:
    import pulumi
    from pulumi.runtime import settings
    from pulumi.runtime.stack import run_pulumi_func

    try:
        deadline = Deadline(resolve_timeout(timeout), project_dir)
        answers.strict_charts = options.lock_enforced(config, stack_file)
    except (TimeoutSettingError, options.StackOptionError) as exc:
        raise PlanInputError(str(exc)) from None
    # Offline plans load only the provider SDK modules the program uses (see lazy_sdk); same names, same objects.
    lazy_sdk.install()
    loop = asyncio.new_event_loop()
    executor = threads.install(loop)
    tasks = _track_tasks(loop)
    asyncio.set_event_loop(loop)
    restore_stack_traces = _skip_source_positions()
    previous_cwd = os.getcwd()
    added_path = str(project_dir)
    modules_before = set(sys.modules)
    # The SDK logs resource errors through the engine logger before re-raising; the CLI reports them once.
    quiet = logging.getLogger("gpucloud.plan.engine")
    # One handler for the process: a handler added per plan piled up (one per program planned) on a logger
    # that lives as long as the process.
    if not any(isinstance(h, logging.NullHandler) for h in quiet.handlers):
        quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    log = PlanLog()
    monitor: Any = None
    # As under the Pulumi CLI, a program's own output is the engine's diagnostics stream, not the plan's: with
    # `--format json` stdout carries the report and nothing else.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        settings.ROOT.set(None)
        mocks = make_mocks(answers)
        monitor = make_monitor(mocks, records, answers, project_dir, deadline)
        pulumi.runtime.set_mocks(
            mocks,
            project=project_name,
            stack=stack,
            preview=preview,
            monitor=monitor,
            logger=quiet,
            organization=OFFLINE_ORGANIZATION,
        )
        # pulumi.log.* go to the engine service; this one keeps them for the report.
        settings.SETTINGS.engine = log
        # set_mocks leaves the set of pending outputs alone; a program that failed earlier in this process left
        # tasks of its (closed) loop there, and the SDK would wait on them.
        settings.SETTINGS.outputs = set()
        pulumi.runtime.set_all_config(config_strings(config))
        sys.path.insert(0, added_path)
        os.chdir(project_dir)
        root = settings.get_root_resource()
        try:
            deadline.run(loop, run_pulumi_func(program))
        except PlanTimeout as exc:
            raise PlanInputError(str(exc)) from None
        except SpecError as exc:
            if stack_file:
                exc.source = f"{exc.source} ({stack_file})"
            raise PlanInputError(exc.render()) from None
        except PlanInputError:
            raise
        except SystemExit as exc:
            where = _user_frame(exc, project_dir) or main.name
            raise PlanInputError(
                f"program called sys.exit({exc.code!r}) in {where}: a Pulumi program must return normally (raise "
                "an exception, or call pulumi.log.error, to fail the plan); the offline plan stopped there"
            ) from None
        except Exception as raised:
            # A deadline that passed while the program was blocked surfaces as whatever the block raised.
            if deadline.expired:
                raise PlanInputError(deadline.expired) from None
            fatal = monitor.fatal or answers.fatal
            if fatal:
                raise PlanInputError(fatal) from None
            error, resource = _sdk_unwrapped(raised)
            where = (_user_frame(error, project_dir) or main.name) + resource
            validation = _validation_message(error)
            if validation is not None:
                raise PlanInputError(f"program error in {where}: {validation}") from None
            hint = "".join(
                f"; the offline plan has no outputs for {t} (give them under {OFFLINE_STACK_REFERENCES_KEY} in the "
                "stack file)"
                for t in answers.unanswered
                if t.startswith("StackReference ")
            )
            raise PlanInputError(f"program error in {where}: {type(error).__name__}: {error}{hint}") from None
        fatal = monitor.fatal or answers.fatal
        if fatal:
            raise PlanInputError(fatal)
        errors = [e["message"] for e in log.entries if e["severity"] == "error"]
        if errors:
            # The engine fails a deployment whose program logged an error diagnostic.
            raise PlanInputError("program logged an error: " + "; ".join(errors))
        try:
            outputs = deadline.run(loop, _stack_outputs(root))
        except PlanTimeout as exc:
            raise PlanInputError(str(exc)) from None
    finally:
        sys.stdout = real_stdout
        restore_stack_traces()
        os.chdir(previous_cwd)
        if added_path in sys.path:
            sys.path.remove(added_path)
        _forget_program_modules(modules_before, project_dir)
        _drain(loop, executor, tasks)
        loop.close()
        asyncio.set_event_loop(None)
    # The SDK registers resources from executor threads, so arrival order varies between runs; URN order
    # makes plans diffable (--compare) and reproducible.
    records.sort(key=lambda r: r.urn)
    warnings = [f"offline plan has no answer for {t}; its results are empty" for t in answers.unanswered]
    warnings += [
        f"offline plan answered {t} from its SDK result type: values echo the query or are placeholders"
        for t in answers.generic
    ]
    warnings += answers.warnings
    warnings += [f"remote component {o.name} ({o.type}) is opaque: {o.reason}" for o in monitor.remote.opaque]
    return Plan(
        project=project_name,
        stack=stack,
        resources=records,
        outputs=outputs,
        warnings=warnings,
        log=[e for e in log.entries if e["severity"] != "error"],
        program_dir=str(project_dir),
        config=config,
        opaque=[o.to_json() for o in monitor.remote.opaque],
    )


def _validation_message(exc: BaseException) -> str | None:
    """A pydantic ValidationError (a component's config model) as one line per problem: the model, the field
    path and pydantic's reason, without its input dump and documentation URL."""
    try:
        from pydantic import ValidationError
    except ImportError:  # pragma: no cover - pydantic is a dependency of gpucloud
        return None
    if not isinstance(exc, ValidationError):
        return None
    lines = [f"invalid {exc.title}: {exc.error_count()} problem{'s' if exc.error_count() != 1 else ''}"]
    for error in exc.errors(include_url=False, include_input=False):
        path = ".".join(str(p) for p in error["loc"]) or "(model)"
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"  - {path}: {message}")
    return "\n".join(lines)


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


def _track_tasks(loop: asyncio.AbstractEventLoop) -> list[asyncio.Task[Any]]:
    """The tasks created on `loop` (every `create_task`, `ensure_future`, `gather` and `run_coroutine_threadsafe`
    goes through its task factory), for `_drain`.

    `asyncio.all_tasks(loop)` would find the same ones, but it walks asyncio's process-wide set of every task still
    in memory: the `gpucloud` command runs with the cyclic collector off, so the finished tasks of every earlier plan
    of the process stay there (a thousand programs' worth for a corpus, about 0.3 CPU s of the Checkov comparison).
    """
    created: list[asyncio.Task[Any]] = []

    def factory(
        loop: asyncio.AbstractEventLoop, coro: Any, context: contextvars.Context | None = None
    ) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, context=context)
        created.append(task)
        return task

    loop.set_task_factory(factory)
    return created


def _drain(loop: asyncio.AbstractEventLoop, executor: threads.RunExecutor, tasks: list[asyncio.Task[Any]]) -> None:
    """Finish everything a run left behind, so a failed program cannot break the next plan in this process.

    After a program error the SDK still has RPCs in executor threads and outputs waiting on them; closing the
    loop under them makes the next run fail with "Event loop is closed". `tasks` are those `_track_tasks` saw
    created on `loop`.
    """
    # Failed outputs that nobody awaits would otherwise be printed by asyncio at garbage collection.
    loop.set_exception_handler(lambda _loop, _context: None)
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        # Bounded too: a program's coroutine may swallow its cancellation and wait on.
        loop.run_until_complete(asyncio.wait(pending, timeout=_DRAIN_S))
    # Bounded: an executor thread still blocked (a program's synchronous wait) must not hang the next plan.
    loop.run_until_complete(threads.settle(executor, _DRAIN_S))


_DRAIN_S = 5.0


_SDK_WRAPPED = re.compile(r"^While processing (resource|input): (?P<name>'[^']*')(?:, type:? (?P<type>'[^']*'))?")


def _sdk_unwrapped(exc: BaseException) -> tuple[BaseException, str]:
    """The program's own exception under the SDK's "While processing resource ... ValueError has risen: ..."
    wrappers (pulumi/runtime/resource.py and rpc.py re-raise with `from e` once per level), and the resource it
    was registering, so the user reads one message instead of one line per level."""
    resource = ""
    while isinstance(exc, ValueError | AssertionError) and exc.__cause__ is not None:
        match = _SDK_WRAPPED.match(str(exc))
        if match is None:
            break
        if match[1] == "resource":
            resource = f" (registering {match['name']}" + (f", {match['type']})" if match["type"] else ")")
        exc = exc.__cause__
    return exc, resource


async def _stack_outputs(root: Any) -> dict[str, Any]:
    """Exports as a preview shows them: known values as values, unknown parts as UNKNOWN_OUTPUT, secrets
    masked."""
    if root is None:
        return {}
    return {key: await _resolved(value) for key, value in getattr(root, "outputs", {}).items()}


async def _resolved(value: Any) -> Any:
    import pulumi
    from pulumi.output import Unknown

    if isinstance(value, pulumi.Output):
        if not await value.is_known():
            return UNKNOWN_OUTPUT
        if await value.is_secret():
            return SECRET
        return await _resolved(await value.future(with_unknowns=True))
    if isinstance(value, Unknown):
        return UNKNOWN_OUTPUT
    if isinstance(value, pulumi.Resource):
        return await _resolved(value.urn)
    if isinstance(value, asyncio.Future | Awaitable):
        return await _resolved(await value)
    if isinstance(value, dict):
        return {str(k): await _resolved(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [await _resolved(v) for v in value]
    if isinstance(value, str | int | float | bool | type(None)):
        return unknown_marker(value)
    return str(value)


# gpucloud's own packages live in the repository root, which is also the root program's directory; they are
# libraries, not program modules, and re-importing them per plan would only cost time.
_LIBRARY_PACKAGES = ("gpucloud",)


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


# What other layers import from here; the project file model and the mock runtime live in project.py and
# monitor.py.
__all__ = [
    "OFFLINE_STACK_REFERENCES_KEY",
    "STACK_REFERENCE_TYPE",
    "PlanInputError",
    "Project",
    "derived_outputs",
    "fake_id",
    "run_callable",
    "run_program",
    "stack_reference_outputs",
]
