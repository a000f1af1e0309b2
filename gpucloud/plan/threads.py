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
"""

from __future__ import annotations

import asyncio
import os
import threading
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


class RunExecutor(ThreadPoolExecutor):
    """One plan's view of the shared pool: it submits there and remembers what it submitted.

    A subclass only because `loop.set_default_executor` accepts nothing else; it starts no thread of its own.
    """

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self._target = _shared()
        # Only the unfinished ones: a plan submits thousands and their results are not needed here.
        self._submitted: set[Future[Any]] = set()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = self._target.submit(fn, *args, **kwargs)
        self._submitted.add(future)
        future.add_done_callback(self._submitted.discard)
        return future

    def pending(self) -> list[Future[Any]]:
        return [f for f in list(self._submitted) if not f.done()]

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        # The loop calls this when it closes: the threads are not this plan's to stop.
        if cancel_futures:
            for future in list(self._submitted):
                future.cancel()


def install(loop: asyncio.AbstractEventLoop) -> RunExecutor:
    executor = RunExecutor()
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
