#!/usr/bin/env python3
"""Reference distributed training script: PyTorch DDP that survives spot interruptions.

- DDP over NCCL when CUDA is available, gloo on CPU (the tests run it that way, unchanged otherwise).
- bf16 autocast and gradient accumulation (no all-reduce on the accumulating micro-steps).
- Checkpoints every --checkpoint-every steps and, on SIGTERM / SIGINT or when the preStop hook creates
  $GPUCLOUD_PREEMPT_FILE, an emergency checkpoint at the current step. Ranks agree on stopping through an
  all-reduce so the checkpoint is one consistent step, never a partial one.
- Checkpoints are written atomically (temporary file, fsync, rename) by rank 0, the last --keep are kept,
  and a restarted job resumes from the newest one.

Launch with torchrun (one process per GPU), e.g. in the TrainingJob template:
    torchrun --nnodes=2 --nproc-per-node=8 ... examples/train_ddp.py --steps 10000
or without torchrun by setting RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT yourself.
The data is synthetic (a fixed random teacher network) so the script runs anywhere; swap `batch_for` for a
real DataLoader over the Lustre mount.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

CHECKPOINT_RE = re.compile(r"^ckpt-(\d{8})\.pt$")
EXIT_PREEMPTED = 143  # 128 + SIGTERM: a Job retries the pod instead of counting the index as done.


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--steps", type=int, default=1000, help="optimizer steps in total")
    p.add_argument("--batch-size", type=int, default=32, help="samples per micro-batch per rank")
    p.add_argument("--accum-steps", type=int, default=2, help="micro-batches per optimizer step")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--no-bf16", dest="bf16", action="store_false", help="disable bf16 autocast")
    p.add_argument(
        "--checkpoint-dir",
        default=os.environ.get("CHECKPOINT_DIR", "./checkpoints"),
        help="where checkpoints go (default $CHECKPOINT_DIR)",
    )
    p.add_argument("--checkpoint-every", type=int, default=100, help="steps between periodic checkpoints")
    p.add_argument("--keep", type=int, default=3, help="checkpoints kept (newest)")
    p.add_argument(
        "--preempt-file",
        default=os.environ.get("GPUCLOUD_PREEMPT_FILE", ""),
        help="file whose appearance means 'checkpoint now and stop' (created by the pod's preStop hook)",
    )
    p.add_argument("--log-file", default="", help="also append JSON lines of metrics here (rank 0)")
    p.add_argument("--step-sleep", type=float, default=0.0, help="sleep per step (tests use it to pace runs)")
    return p.parse_args(argv)


class Preemption:
    """Remembers a termination signal; the training loop checks it once per step."""

    def __init__(self, preempt_file: str) -> None:
        self.signalled = False
        self.preempt_file = preempt_file
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        self.signalled = True

    def requested(self) -> bool:
        return self.signalled or bool(self.preempt_file and os.path.exists(self.preempt_file))


def setup() -> tuple[int, int, int, torch.device]:
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    if world > 1 or "MASTER_ADDR" in os.environ:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
        dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(minutes=10))
    return rank, world, local_rank, device


def build_model(args: argparse.Namespace) -> nn.Module:
    torch.manual_seed(args.seed)
    return nn.Sequential(
        nn.Linear(args.features, args.hidden),
        nn.GELU(),
        nn.Linear(args.hidden, args.hidden),
        nn.GELU(),
        nn.Linear(args.hidden, 1),
    )


def teacher(args: argparse.Namespace) -> torch.Tensor:
    g = torch.Generator().manual_seed(args.seed + 1)
    return torch.randn(args.features, 1, generator=g) / args.features**0.5


def batch_for(
    args: argparse.Namespace, w: torch.Tensor, step: int, micro: int, rank: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Deterministic in (step, micro, rank), so a resumed run sees exactly the data it would have seen."""
    g = torch.Generator().manual_seed(args.seed * 1_000_003 + step * 1009 + micro * 101 + rank)
    x = torch.randn(args.batch_size, args.features, generator=g)
    y = torch.tanh(x @ w) + 0.01 * torch.randn(args.batch_size, 1, generator=g)
    return x, y


def list_checkpoints(directory: Path) -> list[tuple[int, Path]]:
    if not directory.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in directory.iterdir() if (m := CHECKPOINT_RE.match(p.name))]
    return sorted(found)


def save_checkpoint(directory: Path, step: int, state: dict[str, Any], keep: int) -> Path:
    """Atomic write: a crash mid-write leaves only a .tmp file, never a truncated checkpoint."""
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"ckpt-{step:08d}.pt"
    tmp = directory / f".ckpt-{step:08d}.pt.tmp"
    with open(tmp, "wb") as fh:
        torch.save(state, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    for _, old in list_checkpoints(directory)[:-keep]:
        old.unlink(missing_ok=True)
    return final


def load_latest(directory: Path, device: torch.device) -> dict[str, Any] | None:
    checkpoints = list_checkpoints(directory)
    if not checkpoints:
        return None
    return torch.load(checkpoints[-1][1], map_location=device, weights_only=True)


def log(record: dict[str, Any], log_file: str) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    if log_file:
        with open(log_file, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def stop_agreed(local_request: bool, device: torch.device) -> bool:
    """True on every rank when any rank was asked to stop."""
    if not dist.is_initialized():
        return local_request
    flag = torch.tensor([1.0 if local_request else 0.0], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item() > 0)


def micro_contexts(model: nn.Module, accum: int) -> Iterator[contextlib.AbstractContextManager[Any]]:
    for micro in range(accum):
        last = micro == accum - 1
        # Gradients all-reduce once per optimizer step, on the last micro-batch.
        if isinstance(model, DistributedDataParallel) and not last:
            yield model.no_sync()
        else:
            yield contextlib.nullcontext()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    preemption = Preemption(args.preempt_file)
    rank, world, local_rank, device = setup()
    ckpt_dir = Path(args.checkpoint_dir)

    model = build_model(args).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    start_step = 0
    state = load_latest(ckpt_dir, device)
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_step = int(state["step"])
        if rank == 0:
            log({"event": "resumed", "step": start_step, "world_size": world}, args.log_file)
    if dist.is_initialized():
        ddp_args = {"device_ids": [device.index]} if device.type == "cuda" else {}
        model = DistributedDataParallel(model, **ddp_args)
    w = teacher(args)
    loss_fn = nn.MSELoss()

    last_saved = start_step if state is not None else -1

    def checkpoint(step: int, reason: str) -> None:
        nonlocal last_saved
        last_saved = step
        if rank == 0:
            module = model.module if isinstance(model, DistributedDataParallel) else model
            path = save_checkpoint(
                ckpt_dir,
                step,
                {"model": module.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
                args.keep,
            )
            log({"event": "checkpoint", "step": step, "reason": reason, "path": str(path)}, args.log_file)
        if dist.is_initialized():
            dist.barrier()

    step = start_step
    preempted = False
    while step < args.steps:
        if stop_agreed(preemption.requested(), device):
            preempted = True
            break
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for micro, ctx in enumerate(micro_contexts(model, args.accum_steps)):
            x, y = batch_for(args, w, step, micro, rank)
            x, y = x.to(device), y.to(device)
            with ctx:
                with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=args.bf16):
                    pred = model(x)
                loss = loss_fn(pred.float(), y) / args.accum_steps
                loss.backward()
            total += loss.item()
        optimizer.step()
        step += 1
        if rank == 0:
            log({"event": "step", "step": step, "loss": round(total, 6)}, args.log_file)
        if step % args.checkpoint_every == 0 or step == args.steps:
            checkpoint(step, "periodic" if step < args.steps else "final")
        if args.step_sleep:
            time.sleep(args.step_sleep)

    if preempted:
        # Every rank takes the same branch (same loop, same steps), so the barrier inside cannot deadlock.
        if last_saved != step:
            checkpoint(step, "preempted")
        if local_rank == 0 and args.preempt_file:
            # Tells the pod's preStop hook that the emergency checkpoint is on disk.
            Path(args.preempt_file + ".done").touch()
        if rank == 0:
            log({"event": "preempted", "step": step}, args.log_file)
    if dist.is_initialized():
        dist.destroy_process_group()
    return EXIT_PREEMPTED if preempted else 0


if __name__ == "__main__":
    sys.exit(main())
