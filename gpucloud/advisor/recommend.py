"""GPU advisor (`gpucloud recommend`): sizes a job (memory, node count, time) on every catalog type that can run it,
and ranks the types by the cost to do the job.

Stated assumptions (every result repeats them under ``assumptions``):

* Achievable FLOP/s = datasheet dense FLOP/s (BF16/FP16 from the catalog, FP8 from catalog/accelerators.json)
  x MFU, default 0.40: Llama 3 reports 38-43 % BF16 MFU on 8-16K H100s (Dubey et al., "The Llama 3 Herd of
  Models", 2024, table 4); MFU counts model FLOPs only, so activation recomputation is inside it (Chowdhery et
  al., "PaLM", 2022, appendix B).
* Training FLOPs: 6 N D for pre-training and full fine-tuning (Kaplan et al., "Scaling Laws for Neural Language
  Models", 2020); 4 N D for LoRA/QLoRA, whose frozen weights need no weight-gradient GEMMs (forward 2 N D,
  activation gradients 2 N D).
* Training memory per accelerator: mixed-precision Adam holds 16 B/param (2 weights + 2 grads + 4 fp32 master +
  4 m + 4 v; Rajbhandari et al., "ZeRO", 2020); ZeRO stage 3 (FSDP full shard) divides it over every
  accelerator of the job, stage 1/2 only the optimizer (and gradients). LoRA keeps frozen bf16 weights (2 B/param,
  sharded the same way) plus adapters at 16 B/param; QLoRA keeps 4-bit NF4 weights (0.5 B/param + 0.127 bit of
  double-quantised constants; Dettmers et al., "QLoRA", 2023). Activations with full activation checkpointing:
  the layer inputs 2 s b h L bytes plus one layer's recompute working set 34 s b h (Korthikanti et al.,
  "Reducing Activation Recomputation in Large Transformer Models", 2022; flash attention drops the 5 a s^2 b
  term); without it 34 s b h L. Logits s b V x 4 B (fp32 loss).
* Serving: weights at the precision's bytes, KV cache = 2 x layers x kv_heads x head_dim x context x concurrency
  x bytes (1 for fp8, else 2). One replica is tensor-parallel over the fewest accelerators of one node it fits
  in, at a degree that divides the attention heads and divides (or is a multiple of) the KV heads; weights + KV
  cache stay within 80 % of accelerator memory (``SERVE_FILL``). Non-NVIDIA accelerators carry a caveat flag.
  Decode is bandwidth-bound: a step reads the weights and the KV cache once at MBU 0.6 of peak bandwidth
  (Databricks, "LLM Inference Performance Engineering: Best Practices", 2023), capped by 2 N FLOPs per token at
  the MFU.
* 90 % of an accelerator's memory is usable (CUDA/Neuron runtime, allocator fragmentation, collectives' buffers).
"""

from __future__ import annotations

import math
from typing import Any, Final

from gpucloud.advisor.jobs import (
    MAX_NODES,
    MODELS,
    SERVE_BYTES,
    TASKS,
    TRAIN_PRECISIONS,
    AdvisorInputError,
    Job,
    Shape,
    Task,
    _validate,
    resolve_shape,
)
from gpucloud.advisor.network import LINK_EFFICIENCY, comm_to_compute, efficiency, node_network
from gpucloud.advisor.rates import HOURS_PER_MONTH, capacity_block_hours, hourly_price, price_provenance
from gpucloud.catalog import Catalog, InstanceSpec, get_catalog
from gpucloud.catalog.accelerators import Accelerator, accelerator

# The job model lives in gpucloud.advisor.jobs; its public names stay importable from here, where callers
# have always found them.
__all__ = [
    "CAPACITY_BLOCK_MAX_INSTANCES",
    "MODELS",
    "SERVE_BYTES",
    "TASKS",
    "TRAIN_PRECISIONS",
    "AdvisorInputError",
    "Job",
    "Shape",
    "Task",
    "recommend",
    "resolve_shape",
    "tensor_parallel_degrees",
    "training_memory",
]
SCHEMA: Final = "gpucloud.recommend/v1"
GIB: Final = 1024**3
USABLE_FRACTION: Final = 0.9
# Serving keeps weights + KV cache within 80 % of accelerator memory: 10 % for the runtime (vLLM's default
# gpu_memory_utilization is 0.9) and another 10 % headroom for the forward pass's activations, sampler and
# CUDA-graph buffers, which vLLM profiles out of the same budget.
SERVE_FILL: Final = 0.8
MBU: Final = 0.6
ADAM_BYTES: Final = 16
QLORA_BYTES: Final = 0.5 + 0.127 / 8
# AWS Capacity Blocks: at most 256 instances across an account's blocks.
CAPACITY_BLOCK_MAX_INSTANCES: Final = 256
MFU_SOURCE: Final = "Dubey et al. 2024, The Llama 3 Herd of Models, table 4: 38-43 % BF16 MFU on H100"


def _dense_tflops(spec: InstanceSpec, acc: Accelerator, precision: str) -> float | None:
    if precision == "fp8":
        return acc.fp8_dense_tflops
    if precision == "fp16":
        return spec.fp16_tflops
    # int8/int4 serving is weight-only quantisation: the GEMMs run in bf16 (or fp16 where bf16 is missing).
    return spec.bf16_tflops if acc.bf16 else spec.fp16_tflops


def capability(acc: Accelerator, job: Job) -> str | None:
    """Why this accelerator cannot run the job at all, or None."""
    serving = job.task == "serve"
    if not (acc.serving if serving else acc.training):
        role = "serving" if serving else "training"
        return f"{acc.name} ({acc.architecture}) is not a {role} target: {acc.source}"
    if job.precision == "fp8" and not acc.fp8:
        return f"no FP8 on {acc.name} ({acc.architecture}): FP8 needs Hopper, Ada, Blackwell or Trainium2"
    if job.precision == "bf16" and not acc.bf16:
        return f"no BF16 on {acc.name} ({acc.architecture}): use --precision fp16"
    if (job.task == "qlora" or job.precision in ("int8", "int4")) and not acc.quantized_cuda:
        return f"4/8-bit quantised kernels (bitsandbytes, AWQ/GPTQ) need CUDA; {acc.name} has none"
    return None


def training_memory(job: Job, shape: Shape, params: float, gpus: int) -> dict[str, float]:
    """Bytes per accelerator when the job's states are sharded over ``gpus`` accelerators."""
    s, b, h = job.seq_len, job.micro_batch, shape.hidden
    if job.task in ("pretrain", "full-finetune"):
        # Every ZeRO stage (1-3) shards the optimizer states; on one accelerator the division by 1 is a no-op.
        stage = job.zero_stage
        weights = 2 * params / (gpus if stage == 3 else 1)
        grads = 2 * params / (gpus if stage >= 2 else 1)
        optimizer = (ADAM_BYTES - 4) * params / gpus
    else:
        per_param = QLORA_BYTES if job.task == "qlora" else 2
        weights = per_param * params / gpus
        adapters = shape.lora_params(job.lora_rank)
        grads = 2 * adapters
        optimizer = (ADAM_BYTES - 2) * adapters
    if job.activation_checkpointing:
        activations = 2 * s * b * h * shape.layers + 34 * s * b * h
    else:
        activations = 34 * s * b * h * shape.layers
    logits = 4 * s * b * shape.vocab
    return {
        "weights": weights,
        "gradients": grads,
        "optimizer": optimizer,
        "activations": activations,
        "logits": logits,
        "total": weights + grads + optimizer + activations + logits,
    }


def _fit_training(job: Job, shape: Shape, params: float, spec: InstanceSpec) -> int | str:
    """Fewest whole nodes whose accelerators, sharing the job's states, hold it; or why none does.

    A node is paid whole, so the job always spreads over all its accelerators.
    """
    usable = spec.accelerator_memory_gib * GIB * USABLE_FRACTION
    per_node = spec.accelerator_count
    one = training_memory(job, shape, params, per_node)
    fixed = one["activations"] + one["logits"]
    if fixed >= usable:
        return (
            f"one micro-batch's activations ({fixed / GIB:,.1f} GiB) exceed {usable / GIB:,.1f} GiB usable: "
            "lower --micro-batch or --seq-len"
        )
    if one["total"] <= usable:
        return 1
    # Past one node the per-accelerator memory is a + b / G (a unsharded, b sharded over G): solve for G.
    g2, g4 = 2 * per_node, 4 * per_node
    t2 = training_memory(job, shape, params, g2)["total"]
    t4 = training_memory(job, shape, params, g4)["total"]
    sharded = (t2 - t4) / (1 / g2 - 1 / g4)
    unsharded = t2 - sharded / g2
    if unsharded >= usable:
        return f"the unsharded part alone ({unsharded / GIB:,.1f} GiB) exceeds {usable / GIB:,.1f} GiB usable"
    nodes = max(2, math.ceil(sharded / ((usable - unsharded) * per_node)))
    # Float noise can leave the solved count a hair short; past MAX_NODES the answer is "too many" either way.
    while nodes <= MAX_NODES and training_memory(job, shape, params, nodes * per_node)["total"] > usable:
        nodes += 1
    if nodes > MAX_NODES:
        return f"needs {nodes} nodes to hold the model (more than {MAX_NODES})"
    return nodes


def _rank_key(c: dict[str, Any]) -> tuple[bool, float, float]:
    return (c["demoted"], c["cost_usd"], c["hours"])


def _train_candidate(
    job: Job, shape: Shape, params: float, spec: InstanceSpec, acc: Accelerator, price: float, basis: str
) -> dict[str, Any] | str:
    tflops = _dense_tflops(spec, acc, job.precision)
    if not tflops:
        return f"no dense {job.precision.upper()} figure for {acc.name}"
    fit = _fit_training(job, shape, params, spec)
    if isinstance(fit, str):
        return fit
    per_node = spec.accelerator_count
    flops_per_token = (6 if job.task in ("pretrain", "full-finetune") else 4) * params
    total_flops = flops_per_token * job.tokens  # type: ignore[operator]
    achievable = tflops * 1e12 * job.mfu
    full = job.task in ("pretrain", "full-finetune")
    weight_bytes = (QLORA_BYTES if job.task == "qlora" else 2) * params
    # Bytes a node moves per micro-batch across nodes (see gpucloud/advisor/network.py).
    moved = (3 if full and job.zero_stage == 3 else 2) * weight_bytes
    micro = flops_per_token * job.seq_len * job.micro_batch
    single = efficiency(comm_to_compute(spec, moved, micro, achievable, 1))
    multi = efficiency(comm_to_compute(spec, moved, micro, achievable, 2))
    nodes = fit
    if job.deadline_days is not None:
        # Efficiency does not depend on the node count past one node, so two passes settle it.
        for eff in (single if nodes == 1 else multi, multi):
            needed = math.ceil(total_flops / (job.deadline_days * 86400 * achievable * eff))
            nodes = max(nodes, math.ceil(needed / per_node))
            if nodes == 1:
                break
    if nodes > 1 and not spec.efa_supported:
        return f"needs {nodes} nodes and has no EFA: collectives over TCP cannot keep {nodes} nodes busy"
    if nodes > MAX_NODES:
        return f"needs {nodes} nodes to finish in {job.deadline_days:g} days (more than {MAX_NODES})"
    gpus = nodes * per_node
    memory = training_memory(job, shape, params, gpus)
    ratio = comm_to_compute(spec, moved, micro, achievable, nodes)
    eff = efficiency(ratio)
    achievable *= eff
    net = node_network(spec)
    seconds = total_flops / (gpus * achievable)
    hours = seconds / 3600
    billed = capacity_block_hours(hours) if basis == "capacity-block" else hours
    return {
        "nodes": nodes,
        "accelerators": gpus,
        "memory_gib": {k: v / GIB for k, v in memory.items()},
        "zero_stage": (job.zero_stage if gpus > 1 else 0)
        if job.task in ("pretrain", "full-finetune")
        else (3 if gpus > 1 else 0),
        "dense_tflops": tflops,
        "effective_mfu": job.mfu * eff,
        "network": {
            "node_gbps": net.node_gbps,
            "gbps_per_accelerator": net.gbps_per_accelerator,
            "efa_generation": net.efa_generation,
            "scale_up": net.scale_up,
            "scale_up_domain": net.scale_up_domain,
            # Tensor parallelism stays inside the NVLink/NeuronLink domain and splits heads and KV heads evenly.
            "tensor_parallel_max": tensor_parallel_degrees(shape, net.scale_up_domain)[-1],
            "comm_to_compute": round(ratio, 3),
            "efficiency": round(eff, 4),
        },
        "achievable_pflops": gpus * achievable / 1e15,
        "hours": hours,
        "days": hours / 24,
        "billed_hours": billed,
        "cost_usd": nodes * price * billed,
        "usd_per_hour": nodes * price,
    }


def _serve_candidate(
    job: Job, shape: Shape, params: float, spec: InstanceSpec, acc: Accelerator, price: float, basis: str
) -> dict[str, Any] | str:
    tflops = _dense_tflops(spec, acc, job.precision)
    if not tflops or not spec.memory_bandwidth_gbps:
        return f"no dense {job.precision.upper()} or memory-bandwidth figure for {acc.name}"
    weights = params * SERVE_BYTES[job.precision]
    kv_bytes = 1 if job.precision == "fp8" else 2
    kv = 2 * shape.layers * shape.kv_heads * shape.head_dim * job.context * job.concurrency * kv_bytes
    memory = spec.accelerator_memory_gib * GIB
    limit = memory * SERVE_FILL
    per_node = spec.accelerator_count
    degrees = tensor_parallel_degrees(shape, per_node)
    if not degrees:
        return f"no tensor-parallel degree up to {per_node} divides {shape.heads} heads and {shape.kv_heads} KV heads"
    tp = next((d for d in degrees if _serve_bytes(weights, kv, shape, d) <= limit), None)
    if tp is None:
        return (
            f"weights {weights / GIB:,.1f} GiB + KV cache {kv / GIB:,.1f} GiB do not fit one node at tensor "
            f"parallel {degrees[-1]} ({degrees[-1]} x {limit / GIB:,.1f} GiB, "
            f"{round(100 * (1 - SERVE_FILL))} % headroom kept; valid degrees {degrees}): "
            "lower --concurrency/--context or quantise"
        )
    kv_per = kv / min(tp, shape.kv_heads)
    per_accelerator = weights / tp + kv_per
    # A decode step reads every accelerator's share of the weights and its KV heads once, in parallel.
    step = per_accelerator / (spec.memory_bandwidth_gbps * 1e9 * MBU)
    compute_cap = tp * tflops * 1e12 * job.mfu / (2 * params)
    per_replica = min(job.concurrency / step, compute_cap)
    replicas = math.ceil(job.throughput / per_replica) if job.throughput else 1
    per_node_replicas = per_node // tp
    nodes = math.ceil(replicas / per_node_replicas)
    monthly = nodes * price * HOURS_PER_MONTH
    served = replicas * per_replica
    return {
        "nodes": nodes,
        "accelerators": replicas * tp,
        "tensor_parallel": tp,
        "replicas": replicas,
        "memory_gib": {
            "weights": weights / GIB / tp,
            "kv_cache": kv_per / GIB,
            "total": per_accelerator / GIB,
        },
        "headroom_pct": round(100 * (1 - per_accelerator / memory), 1),
        "dense_tflops": tflops,
        "tokens_per_second_per_replica": per_replica,
        "bound": "memory bandwidth" if concurrency_bound(job.concurrency / step, compute_cap) else "compute",
        "hours": HOURS_PER_MONTH,
        "billed_hours": HOURS_PER_MONTH,
        "cost_usd": monthly,
        "usd_per_hour": nodes * price,
        "usd_per_million_tokens": nodes * price / (served * 3600) * 1e6,
    }


def tensor_parallel_degrees(shape: Shape, per_node: int) -> list[int]:
    """Tensor-parallel degrees within one node that split attention evenly, smallest first.

    Megatron-style TP gives each rank whole heads, so the degree divides the attention heads; vLLM shards KV heads
    the same way when the degree divides them and replicates them when the degree is a multiple of them
    (vllm/model_executor/layers/linear.py, QKVParallelLinear), anything else is rejected.
    """
    return [
        d
        for d in range(1, per_node + 1)
        if shape.heads % d == 0 and (shape.kv_heads % d == 0 or d % shape.kv_heads == 0)
    ]


def _serve_bytes(weights: float, kv: float, shape: Shape, tp: int) -> float:
    """Bytes per accelerator: a 1/tp share of the weights plus its KV heads (replicated past kv_heads ranks)."""
    return weights / tp + kv / min(tp, shape.kv_heads)


def accelerator_caveats(spec: InstanceSpec, acc: Accelerator, serving: bool) -> list[str]:
    """What a CUDA-trained habit gets wrong on this accelerator; empty for NVIDIA GPUs."""
    if spec.manufacturer == "nvidia":
        return []
    if acc.architecture == "Neuron" and not serving:
        return [
            f"{acc.name} is an AWS Neuron device, not CUDA: train through the Neuron SDK (NxD Training, "
            "optimum-neuron) on PyTorch/XLA, whose graphs compile ahead of time per shape; CUDA kernels and "
            "CUDA-only libraries (FlashAttention CUDA, Apex, bitsandbytes) are unavailable"
        ]
    if acc.architecture == "Neuron":
        return [
            f"{acc.name} is an AWS Neuron device, not CUDA: serve through the Neuron SDK (NxD Inference / "
            "transformers-neuronx, or vLLM's Neuron backend) with the model compiled ahead of time for fixed "
            "sequence lengths and batch sizes (first compile can take an hour for a 70B model); tensor "
            "parallelism runs over NeuronCores (2 per Inferentia2/Trainium device, 8 per Trainium2); CUDA "
            "kernels (FlashAttention CUDA, bitsandbytes, AWQ/GPTQ) are unavailable"
        ]
    return [f"{acc.name} ({acc.architecture}) is not CUDA: CUDA-only serving stacks and kernels do not run on it"]


def concurrency_bound(bandwidth_rate: float, compute_rate: float) -> bool:
    return bandwidth_rate <= compute_rate


def recommend(job: Job, catalog: Catalog | None = None, top: int = 10) -> dict[str, Any]:
    catalog = catalog or get_catalog()
    _validate(job)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise AdvisorInputError("--top must be a whole number of at least 1")
    shape, params, shape_source = resolve_shape(job)
    serving = job.task == "serve"
    candidates: list[dict[str, Any]] = []
    excluded: list[dict[str, str]] = []
    for spec in catalog:
        acc = accelerator(spec.accelerator)
        reason: str | None
        price, basis = hourly_price(spec, catalog)
        if spec.deprecated:
            reason = "deprecated"
        elif acc is None:
            reason = f"no capability record for {spec.accelerator} in catalog/accelerators.json"
        elif price is None:
            reason = "no price (no On-Demand SKU and no Capacity Block rate)"
        else:
            reason = capability(acc, job)
        if reason is not None or acc is None or price is None:
            excluded.append({"instance_type": spec.instance_type, "reason": reason or ""})
            continue
        sized = (_serve_candidate if serving else _train_candidate)(job, shape, params, spec, acc, price, basis)
        cb_only = basis == "capacity-block"
        if not isinstance(sized, str) and cb_only and sized["nodes"] > CAPACITY_BLOCK_MAX_INSTANCES:
            sized = (
                f"needs {sized['nodes']} nodes; Capacity Blocks hold at most {CAPACITY_BLOCK_MAX_INSTANCES} instances"
            )
        if isinstance(sized, str):
            excluded.append({"instance_type": spec.instance_type, "reason": sized})
            continue
        flags: list[str] = accelerator_caveats(spec, acc, serving)
        if cb_only:
            flags.append("Capacity Blocks only: block rate, billed in whole block days (a block and its extensions)")
        candidates.append(
            {
                "instance_type": spec.instance_type,
                "accelerator": spec.accelerator,
                "architecture": acc.architecture,
                "accelerators_per_node": spec.accelerator_count,
                "accelerator_memory_gib": spec.accelerator_memory_gib,
                "efa": spec.efa_supported,
                "price_basis": basis,
                "node_usd_hour": price,
                # Each figure's own date and source (P-class block rates are dated apart from On-Demand ones).
                **dict(zip(("price_date", "price_source"), price_provenance(spec, basis), strict=True)),
                **sized,
                "flags": flags,
                # Steady serving needs capacity that outlives a block: block-only types rank last unless asked.
                "demoted": serving and cb_only and not job.allow_capacity_blocks,
            }
        )
    candidates.sort(key=_rank_key)
    reason = _first_reason(job, candidates)
    return {
        "schema": SCHEMA,
        "job": _job_json(job, shape, params, shape_source),
        "assumptions": _assumptions(job),
        "first_choice_reason": reason,
        "candidates": candidates[:top],
        "excluded": excluded,
        "price_region": catalog.price_region,
        "price_date": catalog.price_date,
    }


def _first_reason(job: Job, candidates: list[dict[str, Any]]) -> str:
    if not candidates:
        return "no catalog type can run this job; see excluded for why"
    first = candidates[0]
    if job.task == "serve":
        return (
            f"{first['nodes']} x {first['instance_type']}, {first['replicas']} replica(s) of tensor parallel "
            f"{first['tensor_parallel']} on {first['accelerator']}: the cheapest per month that holds the weights "
            "and KV cache and serves the throughput"
        )
    where = f"{first['nodes']} x {first['instance_type']} ({first['accelerators']} x {first['accelerator']})"
    deadline = f" within {job.deadline_days:g} days" if job.deadline_days is not None else ""
    return f"{where}: the cheapest to train {job.tokens:.3g} tokens{deadline} (${first['cost_usd']:,.0f})"


def _job_json(job: Job, shape: Shape, params: float, source: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "task": job.task,
        "precision": job.precision,
        "params": params,
        "shape": {
            "layers": shape.layers,
            "hidden": shape.hidden,
            "heads": shape.heads,
            "kv_heads": shape.kv_heads,
            "head_dim": shape.head_dim,
            "vocab": shape.vocab,
            "ffn": shape.ffn,
        },
        "shape_source": source,
    }
    if job.task == "serve":
        data.update(context=job.context, concurrency=job.concurrency, throughput=job.throughput)
    else:
        data.update(
            tokens=job.tokens, deadline_days=job.deadline_days, seq_len=job.seq_len, micro_batch=job.micro_batch
        )
    return data


def _assumptions(job: Job) -> dict[str, Any]:
    out: dict[str, Any] = {
        "mfu": job.mfu,
        "mfu_source": MFU_SOURCE,
        "usable_memory_fraction": USABLE_FRACTION,
    }
    if job.task == "serve":
        out.update(
            mbu=MBU,
            kv_cache="2 x layers x kv_heads x head_dim x context x concurrency x bytes (fp8 1, else 2)",
            serving_memory_fill=SERVE_FILL,
            tensor_parallel="divides heads; divides KV heads or is a multiple of them (KV heads replicated)",
            throughput="min(concurrency / ((weights + KV) / (tp x bandwidth x MBU)), tp x FLOP/s x MFU / 2N)",
            capacity_blocks="allowed first" if job.allow_capacity_blocks else "ranked last (not for steady serving)",
        )
    else:
        full = job.task in ("pretrain", "full-finetune")
        out.update(
            flops_per_token="6N" if full else "4N (frozen weights: no weight-gradient GEMMs)",
            zero_stage=job.zero_stage if full else 3,
            sharding=(
                f"ZeRO-{job.zero_stage} over every accelerator of the job (none on one accelerator)"
                if full
                else "frozen weights sharded (FSDP) over the job's accelerators when more than one"
            ),
            state_bytes_per_param=ADAM_BYTES if full else (QLORA_BYTES if job.task == "qlora" else 2),
            activation_checkpointing=job.activation_checkpointing,
            communication=(
                "multi-node: per micro-batch a node moves 3x the bf16 weight bytes (ZeRO-3: two all-gathers, one "
                "reduce-scatter; 2x for ZeRO-1/2 and LoRA/QLoRA) at "
                f"{LINK_EFFICIENCY:g} x its network line rate (and each PCIe-only GPU as much over its PCIe link), "
                "overlapped with compute; "
                "effective MFU = MFU / max(1, network time / compute time)"
            ),
            activations=(
                "2 s b h L + 34 s b h (checkpointed layer inputs + one layer recomputed)"
                if job.activation_checkpointing
                else "34 s b h L"
            ),
        )
    return out
