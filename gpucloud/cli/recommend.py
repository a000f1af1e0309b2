"""`gpucloud recommend`: size a training or serving job on every catalog type and rank them by cost to do it."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpucloud.advisor.recommend import MODELS, SERVE_BYTES, TASKS, AdvisorInputError, Job, recommend
from gpucloud.cli.errors import EXIT_OK, CliError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# The advisor's text fits an 80-column terminal (tests render it at this width).
TEXT_WIDTH = 80


def register(sub: Any) -> None:
    p = sub.add_parser(
        "recommend",
        help="size a training or serving job and rank instance types by cost to do it",
        description="Memory breakdown, node count, time and cost to finish a job (pretrain, full-finetune, lora, "
        "qlora) or to serve a model, on every catalog type that can run it, ranked by cost. Assumptions (MFU, "
        "ZeRO stage, activation checkpointing, KV cache) are printed with the result.",
    )
    p.add_argument("task", choices=(*TASKS, "hpc"), help="what the job does (hpc: FP64 throughput per dollar)")
    model = p.add_argument_group("model (one of --model, --params, or a config)")
    model.add_argument("--model", choices=sorted(MODELS), help="a public model config")
    model.add_argument("--params", type=float, metavar="BILLIONS", help="parameters, in billions (e.g. 70)")
    for flag, example in (
        ("--layers", "80"),
        ("--hidden", "8192"),
        ("--heads", "64"),
        ("--kv-heads", "8"),
        ("--vocab", "128256"),
        ("--ffn", "28672"),
    ):
        model.add_argument(flag, type=int, help=f"model config (e.g. {example})")
    p.add_argument("--precision", choices=sorted(SERVE_BYTES), default="bf16", help="compute/weights precision")
    train = p.add_argument_group("training")
    train.add_argument("--tokens", type=float, help="tokens to train on (e.g. 1e12)")
    train.add_argument("--deadline-days", type=float, help="finish within this many days (adds nodes)")
    train.add_argument("--seq-len", type=int, default=4096, help="sequence length (4096)")
    train.add_argument("--micro-batch", type=int, default=1, help="sequences per accelerator per step (1)")
    train.add_argument("--zero-stage", type=int, default=3, help="ZeRO stage for full training (3)")
    train.add_argument("--lora-rank", type=int, default=16, help="LoRA rank on all linear layers (16)")
    train.add_argument("--no-activation-checkpointing", action="store_true", help="keep every layer's activations")
    serve = p.add_argument_group("serving")
    serve.add_argument("--context", type=int, default=8192, help="tokens of context per sequence (8192)")
    serve.add_argument("--concurrency", type=int, default=16, help="sequences in flight per replica (16)")
    serve.add_argument("--throughput", type=float, help="output tokens/s the fleet must serve")
    serve.add_argument(
        "--allow-capacity-blocks", action="store_true", help="let Capacity-Block-only types rank first for serving"
    )
    hpc = p.add_argument_group("hpc (FP64)")
    hpc.add_argument("--work", type=float, metavar="PFLOP", help="FP64 work to do, in PFLOP (e.g. 5e6)")
    hpc.add_argument(
        "--fp64", choices=("vector", "tensor"), default="vector", help="FP64 rate to count: vector or tensor core"
    )
    p.add_argument("--mfu", type=float, default=0.4, help="model FLOPs utilisation (0.4)")
    p.add_argument("--top", type=int, default=8, help="how many types to list (default 8)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.task == "hpc":
        return _run_hpc(args)
    job = Job(
        task=args.task,
        params_b=args.params,
        model=args.model,
        layers=args.layers,
        hidden=args.hidden,
        heads=args.heads,
        kv_heads=args.kv_heads,
        vocab=args.vocab,
        ffn=args.ffn,
        precision=args.precision,
        seq_len=args.seq_len,
        micro_batch=args.micro_batch,
        tokens=args.tokens,
        deadline_days=args.deadline_days,
        context=args.context,
        concurrency=args.concurrency,
        throughput=args.throughput,
        mfu=args.mfu,
        zero_stage=args.zero_stage,
        activation_checkpointing=not args.no_activation_checkpointing,
        lora_rank=args.lora_rank,
        allow_capacity_blocks=args.allow_capacity_blocks,
    )
    try:
        result = recommend(job, top=args.top)
    except AdvisorInputError as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK
    print(console_text(lambda console, table: _text(result, console, table), width=TEXT_WIDTH), end="")
    return EXIT_OK


def _run_hpc(args: argparse.Namespace) -> int:
    from gpucloud.advisor.hpc import HpcInputError, recommend_hpc

    try:
        result = recommend_hpc(args.work, args.deadline_days, args.fp64, top=args.top)
    except HpcInputError as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK
    print(console_text(lambda console, table: _hpc_text(result, console, table), width=TEXT_WIDTH), end="")
    return EXIT_OK


def _hpc_text(result: dict[str, Any], console: Any, table: Any) -> None:
    job = result["job"]
    work = job["work_pflop"] is not None
    t = table(f"FP64 ({job['fp64']}) {'cost to finish' if work else 'TFLOPS per $/h'} ({result['price_date']} prices)")
    for name in ("type", "accel", "FP64 TF/node", "TF per $/h", "cost $" if work else "$/h"):
        t.add_column(name, justify="left" if name in ("type", "accel") else "right")
    for c in result["candidates"]:
        t.add_row(
            c["instance_type"] + ("*" if c["flags"] else ""),
            f"{c.get('nodes', 1)} x {c['accelerators_per_node']} {c['accelerator']}",
            f"{c['node_fp64_tflops']:,.1f}",
            f"{c['tflops_per_usd_hour']:,.2f}",
            f"{c['cost_usd']:,.0f}" if work else f"{c['node_usd_hour']:,.2f}",
        )
    console.print(t)
    for c in result["candidates"]:
        for flag in c["flags"]:
            console.print(f"* {c['instance_type']}: {flag}")
    console.print("assumptions:")
    for key, value in result["assumptions"].items():
        console.print(f"  {key}: {value}")
    console.print(f"{len(result['excluded'])} types excluded (see --format json for each reason)")


def _hours(hours: float) -> str:
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} d"


def _text(result: dict[str, Any], console: Any, table: Any) -> None:
    job, assume = result["job"], result["assumptions"]
    shape = job["shape"]
    serving = job["task"] == "serve"
    console.print(
        f"[bold]{job['task']}[/bold] {job['params'] / 1e9:,.1f}B params ({job['shape_source']}), {job['precision']}"
    )
    console.print(
        f"shape: {shape['layers']} layers, hidden {shape['hidden']}, {shape['heads']} heads, "
        f"{shape['kv_heads']} KV heads, vocab {shape['vocab']}"
    )
    if serving:
        target = f"{job['throughput']:,.0f} tok/s" if job["throughput"] else "one replica"
        console.print(f"context {job['context']}, concurrency {job['concurrency']}, target {target}")
    else:
        deadline = f", deadline {job['deadline_days']:g} days" if job["deadline_days"] else ""
        console.print(f"{job['tokens']:.3g} tokens{deadline}, seq {job['seq_len']}, micro-batch {job['micro_batch']}")
    # Each row names its price's date: block and On-Demand rates are dated apart.
    t = table(f"Ranked by {'cost per month' if serving else 'cost to finish'} (oldest price {result['price_date']})")
    t.add_column("type")
    t.add_column("nodes x accel", justify="right")
    t.add_column("GiB/acc", justify="right")
    t.add_column("tok/s/repl" if serving else "time", justify="right")
    # Training: the share of compute speed the network leaves (gpucloud/advisor/network.py); serving: headroom.
    t.add_column("free" if serving else "net", justify="right")
    t.add_column("$/month" if serving else "cost $", justify="right")
    for c in result["candidates"]:
        mark = "*" if c["flags"] else ""
        t.add_row(
            c["instance_type"] + mark,
            f"{c['nodes']} x {c['accelerators_per_node']} {c['accelerator']}",
            f"{c['memory_gib']['total']:,.1f}",
            f"{c['tokens_per_second_per_replica']:,.0f}" if serving else _hours(c["hours"]),
            f"{c['headroom_pct']:.0f}%" if serving else f"{100 * c['network']['efficiency']:.0f}%",
            f"{c['cost_usd']:,.0f}",
        )
    console.print(t)
    if result["candidates"]:
        dated = ", ".join(
            f"{c['instance_type']} {'block' if c['price_basis'] == 'capacity-block' else 'on-demand'} "
            f"{c.get('price_date') or 'undated'}"
            for c in result["candidates"]
        )
        console.print(f"price dates: {dated}")
    for c in result["candidates"]:
        for flag in c["flags"]:
            console.print(f"* {c['instance_type']}: {flag}")
    console.print(f"First choice: {result['first_choice_reason']}")
    if result["candidates"]:
        first = result["candidates"][0]
        parts = ", ".join(f"{k} {v:,.1f}" for k, v in first["memory_gib"].items() if k != "total")
        console.print(f"memory per accelerator (GiB): {parts}")
    console.print("assumptions:")
    for key, value in assume.items():
        console.print(f"  {key}: {value}")
    console.print(f"{len(result['excluded'])} types excluded (see --format json for each reason)")


def console_text(body: Callable[[Console, Callable[[str], Table]], None], width: int = 140) -> str:
    """Render `body(console, table_factory)` to a string (shared by the advisor, preflight and prices commands)."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    color = sys.stdout.isatty()
    console = Console(file=buf, width=width, color_system="standard" if color else None, highlight=False)

    def table(title: str) -> Table:
        return Table(title=title, title_justify="left")

    body(console, table)
    return buf.getvalue()
