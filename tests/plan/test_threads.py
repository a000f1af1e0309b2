"""The SDK's executor threads are shared by the plans of one process (gpucloud.plan.threads): no thread starts per
plan, work a plan leaves blocked does not starve the next one, and a forked worker plans with threads of its own."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading

import pulumi
import pulumi_aws as aws
import pytest

from gpucloud.plan import engine, run_callable, threads


def _two_buckets() -> None:
    first = aws.s3.BucketV2("first")
    aws.s3.BucketV2("second", tags={"after": first.bucket})
    pulumi.export("name", first.bucket)


def _plan_two_buckets() -> list[str]:
    return sorted(r.name for r in run_callable(_two_buckets).resources)


def test_plans_after_the_first_start_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _plan_two_buckets() == ["first", "second"]
    started: list[str] = []
    start = threading.Thread.start

    def counting(self: threading.Thread) -> None:
        started.append(self.name)
        start(self)

    monkeypatch.setattr(threading.Thread, "start", counting)
    for _ in range(5):
        assert _plan_two_buckets() == ["first", "second"]
    # A pool per plan started its threads and one more to join them, every plan.
    assert started == []


def test_work_left_blocked_retires_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_DRAIN_S", 0.2)
    release = threading.Event()

    def leaves_a_blocked_thread() -> None:
        asyncio.get_event_loop().run_in_executor(None, release.wait)
        aws.s3.BucketV2("b")

    try:
        assert [r.name for r in run_callable(leaves_a_blocked_thread).resources] == ["b"]
        blocked = threads._pool
        assert blocked is None or blocked._shutdown
        # The next plan gets threads of its own rather than queueing behind the blocked one.
        assert _plan_two_buckets() == ["first", "second"]
        assert threads._pool is not None and threads._pool is not blocked
    finally:
        release.set()


def _plan_in_child(_: int) -> list[str]:
    return _plan_two_buckets()


def test_a_forked_worker_plans_with_threads_of_its_own() -> None:
    # The parent's pool is warm (its threads exist here only); a child that queued work there would wait forever.
    assert _plan_two_buckets() == ["first", "second"]
    assert threads._pool is not None
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_plan_in_child, (0,)).get(timeout=60) == ["first", "second"]


def test_plans_leave_one_handler_on_the_engine_logger() -> None:
    import logging

    for _ in range(3):
        _plan_two_buckets()
    handlers = logging.getLogger("gpucloud.plan.engine").handlers
    # pytest's own capture handler may sit beside it.
    assert sum(1 for h in handlers if type(h) is logging.NullHandler) == 1
