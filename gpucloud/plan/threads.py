"""The executor threads the SDK's RPCs run on, shared by every plan of one process.

The SDK sends each registration, invoke and output resolution to the monitor through
`loop.run_in_executor(None, ...)`, and every plan runs on a fresh event loop; asyncio gives each loop its own
default ThreadPoolExecutor, so each plan started its threads anew and joined them (through one more thread) when
it finished: about three thread starts per program, each a handover of the GIL that a loaded machine makes slow.
Here each loop gets a `RunExecutor` that hands its work to one process-wide pool (the same size asyncio's default
would be) and keeps the futures it handed out, so a plan can still wait for exactly its own work at the end.

A plan that leaves work behind that does not finish (a program's synchronous wait in an executor thread) retires
the pool: the next plan gets fresh threads, as it did with a pool per loop, and the blocked thread is abandoned as
it was before. A forked process (`plan --all` workers) inherits the pool object but none of its threads, so it
starts its own.

The SDK's own calls to the monitor (`pulumi.runtime._context.wrap_with_context` wrappers) run inline instead, on
the loop's thread, when the running loop is the plan's: the monitor is gpucloud's in-process mock, whose calls are
short, so a thread buys nothing and costs a GIL handover and a wake-up of the loop per registration (about 0.2 CPU
s of the Checkov comparison's 272 programs). They run as on an executor thread: with no running loop, and the
thread's current loop a private one (the SDK's mock serializes with `_sync_await` on the current loop, which must
not pump the plan's). A monitor call that would have to wait for the plan's loop (a transform, which runs on it)
or that runs a subprocess (a Helm chart render, which other threads may overlap) raises `NeedsThread` before it
changes anything, and goes to the pool as before. Anything else handed to the default executor (a program's own
`run_in_executor`) goes to the pool too.
"""

from __future__ import annotations

import asyncio
import os
import threading
from asyncio import events
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _shared() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            # asyncio's default executor for a loop: min(32, cores + 4) threads, named alike.
            _pool = ThreadPoolExecutor(thread_name_prefix="asyncio")
        return _pool


def _retire(pool: ThreadPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False)


def _forget_after_fork() -> None:
    # The child has the parent's pool object but not its threads: work queued there would never run.
    global _pool, _lock
    _pool = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


class NeedsThread(Exception):
    """Raised by a monitor call running inline that must run on an executor thread instead (see the module doc)."""


_state = threading.local()


def inline() -> bool:
    """Whether the calling code runs inline on the plan's loop thread (as a monitor call), not on a pool thread."""
    return bool(getattr(_state, "inline", False))


def _is_sdk_rpc(fn: Callable[..., Any]) -> bool:
    return (
        getattr(fn, "__module__", None) == "pulumi.runtime._context"
        and getattr(fn, "__qualname__", None) == "wrap_with_context.<locals>.wrapper"
    )


class RunExecutor(ThreadPoolExecutor):
    """One plan's view of the shared pool: it submits there and remembers what it submitted.

    A subclass only because `loop.set_default_executor` accepts nothing else; it starts no thread of its own.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(max_workers=1)
        self._target = _shared()
        self._loop = loop
        # The current loop of inline monitor calls (what an executor thread's would be), made on first use.
        self._private: asyncio.AbstractEventLoop | None = None
        # Only the unfinished ones: a plan submits thousands and their results are not needed here.
        self._submitted: set[Future[Any]] = set()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        loop = self._loop
        if loop is not None and events._get_running_loop() is loop and _is_sdk_rpc(fn):
            done = self._inline(loop, fn, args, kwargs)
            if done is not None:
                # `loop.run_in_executor` wraps what this returns with `asyncio.wrap_future`, which passes an
                # asyncio future through as it is: no wake-up of the loop from another thread.
                return done  # type: ignore[return-value]
        future = self._target.submit(fn, *args, **kwargs)
        self._submitted.add(future)
        future.add_done_callback(self._submitted.discard)
        return future

    def _inline(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> asyncio.Future[Any] | None:
        """Run `fn` here as an executor thread would; its result as a done future of `loop`, or None if it raised
        NeedsThread (nothing done yet: run it on a thread)."""
        if self._private is None:
            self._private = asyncio.new_event_loop()
        done: asyncio.Future[Any] = loop.create_future()
        events._set_running_loop(None)
        asyncio.set_event_loop(self._private)
        _state.inline = True
        try:
            done.set_result(fn(*args, **kwargs))
        except NeedsThread:
            return None
        except Exception as exc:
            done.set_exception(exc)
        finally:
            _state.inline = False
            asyncio.set_event_loop(loop)
            events._set_running_loop(loop)
        return done

    def pending(self) -> list[Future[Any]]:
        return [f for f in list(self._submitted) if not f.done()]

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        # The loop calls this when it closes: the threads are not this plan's to stop.
        if self._private is not None:
            self._private.close()
            self._private = None
        if cancel_futures:
            for future in list(self._submitted):
                future.cancel()


def install(loop: asyncio.AbstractEventLoop) -> RunExecutor:
    executor = RunExecutor(loop)
    loop.set_default_executor(executor)
    return executor


async def settle(executor: RunExecutor, timeout: float) -> None:
    """Wait (on the loop, so work that calls back into it can finish) up to `timeout` seconds for what this plan
    submitted; work still running then retires the shared pool, so it cannot starve the next plan."""
    pending = executor.pending()
    if pending:
        await asyncio.wait([asyncio.wrap_future(f) for f in pending], timeout=timeout)
    if executor.pending():
        _retire(executor._target)
