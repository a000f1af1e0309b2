"""Bounded waits: a plan finishes, or stops with one message naming what never resolved, within a deadline.

A Pulumi program can wait forever: an Output built from a Future nothing completes, a resource whose input waits
on such an Output, a transform or an apply that blocks. The Pulumi CLI would wait as long; a pull-request check must
not. Every wait of the offline plan runs against one Deadline per program (default DEFAULT_TIMEOUT_S, else the
`--timeout` flag or the GPUCLOUD_PLAN_TIMEOUT environment variable): the event loop stops at the deadline and the
message lists the registrations still pending and what each waited for, read from their coroutines' frames. A
program blocked in synchronous code (the loop cannot stop it) is interrupted by SIGALRM a little later, where the
plan runs in the main thread.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

DEFAULT_TIMEOUT_S = 120.0
TIMEOUT_ENV = "GPUCLOUD_PLAN_TIMEOUT"
# After the loop's own deadline, how long a main thread stuck in synchronous code gets before SIGALRM.
_ALARM_GRACE_S = 2.0
_FIX = f"if the program is only slow, raise the limit with `gpucloud plan --timeout SECONDS` or {TIMEOUT_ENV}=SECONDS"


class PlanTimeout(Exception):
    """The program did not finish before the deadline; str() is the message for the user (exit 2)."""


class TimeoutSettingError(ValueError):
    """A timeout that is not a number of seconds above 0."""


def resolve_timeout(explicit: float | None = None) -> float:
    """The plan's limit in seconds: `explicit` (the --timeout flag), else GPUCLOUD_PLAN_TIMEOUT, else 120."""
    if explicit is not None:
        if not explicit > 0:
            raise TimeoutSettingError(f"--timeout: {explicit:g} is not a number of seconds above 0; give e.g. 120")
        return float(explicit)
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise TimeoutSettingError(
            f"{TIMEOUT_ENV}={raw!r} is not a number of seconds above 0; set it to e.g. 120, or unset it for the "
            f"default ({DEFAULT_TIMEOUT_S:g} s)"
        )
    return value


@dataclass
class Deadline:
    """One program's time limit; `expired` holds the message once it has passed."""

    seconds: float
    program_dir: Path | None = None
    end: float = field(init=False)
    expired: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def run(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]) -> Any:
        """`loop.run_until_complete(coro)`, stopped at the deadline with PlanTimeout naming what was pending."""
        task = loop.create_task(coro)
        # The alarm's PlanTimeout is suppressed here: its message is in self.expired.
        with self._alarm(), suppress(PlanTimeout):
            loop.run_until_complete(asyncio.wait({task}, timeout=self.remaining()))
        if self.expired is None and task.done():
            return task.result()
        if self.expired is None:
            self.expired = self._message(pending_waits(loop))
        raise PlanTimeout(self.expired)

    def _message(self, waits: list[Wait], blocked_at: str | None = None) -> str:
        head = f"the program did not finish within {self.seconds:g} s"
        if blocked_at:
            return f"{head}: it was blocked in synchronous code at {blocked_at}; {_FIX}"
        if not waits:
            return f"{head}, and no resource registration was pending (an apply or export waited); {_FIX}"
        roots = [w for w in waits if not w.on_pending]
        ordered = roots + [w for w in waits if w.on_pending]
        shown = "; ".join(w.describe() for w in ordered[:8])
        more = f"; and {len(ordered) - 8} more" if len(ordered) > 8 else ""
        noun = "registration" if len(waits) == 1 else "registrations"
        return f"{head}: {len(waits)} resource {noun} never completed: {shown}{more}; {_FIX}"

    @contextmanager
    def _alarm(self) -> Iterator[None]:
        # Only the main thread receives signals; elsewhere the loop's own deadline is the bound.
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            yield
            return

        def on_alarm(_signum: int, frame: FrameType | None) -> None:
            if self.expired is None:
                self.expired = self._message([], blocked_at=_where(frame, self.program_dir))
            raise PlanTimeout(self.expired)

        started = time.monotonic()
        previous = signal.signal(signal.SIGALRM, on_alarm)
        previous_timer = signal.setitimer(signal.ITIMER_REAL, self.remaining() + _ALARM_GRACE_S)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            # Someone else's alarm (a test runner's timeout) keeps running, less the time spent here.
            if previous_timer[0] > 0:
                left = max(previous_timer[0] - (time.monotonic() - started), 0.001)
                signal.setitimer(signal.ITIMER_REAL, left, previous_timer[1])


def _where(frame: FrameType | None, program_dir: Path | None) -> str:
    """The innermost frame of the program's own code (else the innermost frame) as file:line in function."""
    fallback: str | None = None
    while frame is not None:
        path = frame.f_code.co_filename
        here = f"{path}:{frame.f_lineno} in {frame.f_code.co_name}"
        fallback = fallback or here
        if program_dir is not None and path.startswith(str(program_dir) + os.sep) and "site-packages" not in path:
            return f"{os.path.relpath(path, program_dir)}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return fallback or "an unknown place"


@dataclass
class Wait:
    """One pending registration: the resource, and what it waited for."""

    type: str
    name: str
    what: str
    on: list[tuple[str, str]] = field(default_factory=list)
    on_pending: bool = False

    def describe(self) -> str:
        if self.on:
            names = ", ".join(f"{t} '{n}'" for t, n in self.on)
            source = f"an output of {names}" + (", itself pending" if self.on_pending else "")
        else:
            source = "an awaitable nothing completes (a Future or Output the program never resolved)"
        return f"{self.type} '{self.name}' waited for {self.what}, {source}"


_SDK_RESOURCE = os.path.join("pulumi", "runtime", "resource.py")


def pending_waits(loop: asyncio.AbstractEventLoop) -> list[Wait]:
    """Every resource registration still pending on `loop`, with what it waits for."""
    from pulumi import Output

    found: list[tuple[Wait, Any]] = []
    owners: dict[int, tuple[str, str]] = {}
    for task in asyncio.all_tasks(loop):
        if task.done():
            continue
        frames, awaited = _await_chain(task.get_coro())
        register = next(
            (f for f in frames if f.f_code.co_name == "do_register" and f.f_code.co_filename.endswith(_SDK_RESOURCE)),
            None,
        )
        if register is None:
            continue
        ty, name = register.f_locals.get("ty"), register.f_locals.get("name")
        if not isinstance(ty, str) or not isinstance(name, str):
            continue
        # The resource's own outputs (urn, id, every property) resolve when this registration does.
        for value in vars(register.f_locals.get("res", None) or object()).values():
            if isinstance(value, Output):
                owners[id(value._data)] = (ty, name)
        what = "its options (parent, provider, dependsOn or deletedWith)"
        keys: list[str] = []
        for f in frames:
            code = f.f_code.co_name
            if code == "_resolve_depends_on_urns":
                what = "its dependsOn"
            elif code == "serialize_properties" and isinstance(f.f_locals.get("k"), str):
                keys.append(f.f_locals["k"])
            # The innermost Output awaited: its data future is what never resolved (a C FutureIter hides it).
            for local in ("value", "self", "output"):
                candidate = f.f_locals.get(local)
                if isinstance(candidate, Output):
                    awaited = candidate._data
        if keys:
            what = f"its input '{'.'.join(keys)}'"
        found.append((Wait(ty, name, what), awaited))
    waits: list[Wait] = []
    for wait, awaited in found:
        wait.on = sorted(_sources(awaited, owners, set()))
        waits.append(wait)
    pending = {(w.type, w.name) for w in waits}
    for w in waits:
        w.on_pending = any(dep in pending for dep in w.on)
    waits.sort(key=lambda w: (w.type, w.name))
    return waits


def _sources(obj: Any, owners: dict[int, tuple[str, str]], seen: set[int]) -> set[tuple[str, str]]:
    """The pending resources whose registration would complete `obj` (a Future, a Task, a gathering of them)."""
    if obj is None or id(obj) in seen:
        return set()
    seen.add(id(obj))
    if id(obj) in owners:
        return {owners[id(obj)]}
    if isinstance(obj, asyncio.Task):
        from pulumi import Output

        frames, awaited = _await_chain(obj.get_coro())
        for f in frames:
            for local in ("value", "self", "output", "inner"):
                candidate = f.f_locals.get(local)
                if isinstance(candidate, Output) and candidate._data is not obj:
                    awaited = candidate._data
        return _sources(awaited, owners, seen)
    out: set[tuple[str, str]] = set()
    for child in getattr(obj, "_children", None) or ():  # asyncio.gather
        out |= _sources(child, owners, seen)
    return out


def _await_chain(coro: Any) -> tuple[list[FrameType], Any]:
    """The frames of a suspended coroutine and of everything it awaits, outermost first, and the innermost
    object awaited (a Future, or None)."""
    frames: list[FrameType] = []
    seen: set[int] = set()
    while coro is not None and id(coro) not in seen:
        seen.add(id(coro))
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            return frames, coro
        frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return frames, None
