"""examples/train_ddp.py on CPU with gloo: two ranks, a SIGTERM to one of them, an emergency checkpoint,
and a restart that resumes from it with the loss carrying on."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train_ddp.py"
TIMEOUT = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(args: list[str], rank: int | None = None, world: int = 1, port: int = 0) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "CHECKPOINT_DIR"):
        env.pop(key, None)
    if rank is not None:
        env.update(
            RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
        )
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def records(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_for_step(log: Path, step: int, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if any(r.get("event") == "step" and r["step"] >= step for r in records(log)):
            return
        if any(p.poll() is not None for p in procs):
            raise AssertionError(f"a rank exited early: {[p.stderr.read() if p.stderr else b'' for p in procs]}")
        time.sleep(0.05)
    raise AssertionError(f"step {step} not reached in {TIMEOUT}s")


def finish(procs: list[subprocess.Popen[bytes]]) -> list[int]:
    codes = []
    for p in procs:
        try:
            p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            raise
        codes.append(p.returncode)
    return codes


def checkpoints(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_two_ranks_sigterm_one_checkpoint_and_resume(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    args = ["--steps", "30", "--checkpoint-every", "5", "--keep", "2", "--checkpoint-dir", str(ckpt)]
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    port = free_port()
    run = [launch([*args, "--log-file", str(first_log), "--step-sleep", "0.15"], r, 2, port) for r in (0, 1)]
    wait_for_step(first_log, 7, run)
    run[1].send_signal(signal.SIGTERM)  # the spot notice reaches one pod first
    assert finish(run) == [143, 143]

    first = records(first_log)
    stopped = next(r["step"] for r in first if r["event"] == "preempted")
    assert stopped >= 7 and stopped < 30
    saved_steps = sorted({*range(5, stopped + 1, 5), stopped})
    assert checkpoints(ckpt) == [f"ckpt-{s:08d}.pt" for s in saved_steps[-2:]]  # keep=2, no .tmp left
    losses_before = [r["loss"] for r in first if r["event"] == "step"]
    assert len(losses_before) == stopped

    port = free_port()
    resumed = [launch([*args, "--log-file", str(second_log)], r, 2, port) for r in (0, 1)]
    assert finish(resumed) == [0, 0]
    second = records(second_log)
    assert second[0] == {"event": "resumed", "step": stopped, "world_size": 2}
    steps = [r for r in second if r["event"] == "step"]
    assert [r["step"] for r in steps] == list(range(stopped + 1, 31))
    # The loss carries on from where it stopped instead of starting over from the untrained model.
    assert steps[0]["loss"] < 0.5 * losses_before[0]
    assert steps[0]["loss"] < 2.0 * max(losses_before[-3:])
    assert steps[-1]["loss"] < losses_before[0]
    assert checkpoints(ckpt) == ["ckpt-00000025.pt", "ckpt-00000030.pt"]
    assert second[-1]["event"] == "checkpoint" and second[-1]["reason"] == "final"


def test_prestop_file_triggers_emergency_checkpoint_single_process(tmp_path: Path) -> None:
    ckpt, log, flag = tmp_path / "ckpt", tmp_path / "log.jsonl", tmp_path / "preempt"
    proc = launch(
        [
            "--steps", "500", "--checkpoint-every", "100", "--checkpoint-dir", str(ckpt),
            "--preempt-file", str(flag), "--log-file", str(log), "--step-sleep", "0.05", "--accum-steps", "1",
        ]
    )  # fmt: skip
    wait_for_step(log, 3, [proc])
    flag.touch()
    assert finish([proc]) == [143]
    stopped = next(r["step"] for r in records(log) if r["event"] == "preempted")
    assert checkpoints(ckpt) == [f"ckpt-{stopped:08d}.pt"]
    assert (tmp_path / "preempt.done").exists()
    saved = [r for r in records(log) if r["event"] == "checkpoint"]
    assert [(r["step"], r["reason"]) for r in saved] == [(stopped, "preempted")]
