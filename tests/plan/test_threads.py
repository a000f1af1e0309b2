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
    # The SDK's monitor calls run inline: warm the parent's pool threads as a program's own executor work would.
    threads._shared().submit(lambda: None).result(timeout=10)
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


def _monitor_threads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    from pulumi.runtime.mocks import MockMonitor

    seen: list[tuple[str, bool]] = []
    register = MockMonitor.RegisterResource

    def recording(self: MockMonitor, request: object) -> object:
        seen.append((request.name, threading.current_thread() is threading.main_thread()))  # type: ignore[attr-defined]
        return register(self, request)

    monkeypatch.setattr(MockMonitor, "RegisterResource", recording)
    return seen


def test_the_sdks_monitor_calls_run_inline_on_the_plans_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _monitor_threads(monkeypatch)
    assert _plan_two_buckets() == ["first", "second"]
    assert sorted(name for name, _ in seen if name in ("first", "second")) == ["first", "second"]
    assert all(on_main for _, on_main in seen)
    # The inline calls leave the plan's loop as it was: the next plan (and its outputs) work alike.
    assert run_callable(_two_buckets).outputs == {"name": run_callable(_two_buckets).outputs["name"]}


def test_a_registration_with_a_transform_runs_on_a_pool_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # The transform runs on the plan's loop, which an inline call would block until the deadline.
    seen = _monitor_threads(monkeypatch)

    def tagged(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
        return pulumi.ResourceTransformResult(props={**args.props, "tags": {"team": "ml"}}, opts=args.opts)

    def program() -> None:
        aws.s3.BucketV2("plain")
        aws.s3.BucketV2("transformed", opts=pulumi.ResourceOptions(transforms=[tagged]))

    plan = run_callable(program, timeout=30)
    by_name = {r.name: r for r in plan.resources}
    assert by_name["transformed"].inputs["tags"] == {"team": "ml"}
    assert dict(seen)["plain"] is True
    assert dict(seen)["transformed"] is False


def test_a_programs_own_executor_work_stays_on_the_pool() -> None:
    ran_on: list[bool] = []

    def program() -> None:
        def work() -> None:
            ran_on.append(threading.current_thread() is threading.main_thread())

        asyncio.get_event_loop().run_in_executor(None, work)
        aws.s3.BucketV2("b")

    assert [r.name for r in run_callable(program).resources] == ["b"]
    assert ran_on == [False]
