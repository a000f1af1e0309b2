"""`gpucloud recommend` pinned where the realistic workloads in test_recommend.py leave room: every bad-input message
in full, the defaults of an assumed or partial model shape, boundaries (exactly MAX_NODES nodes, exactly 256
Capacity Block instances, rank/top/context of 1, MFU of 1), memory-bound node counts, the reported ZeRO stage, and
the exclusion reasons for missing records and prices.

Expected values are worked out by hand in the comments: parameters from the Llama layout, bytes per parameter,
6 N D / 4 N D FLOPs, and catalog figures (gpucloud/catalog/instances.json, gpucloud/prices/snapshot.json).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any

import pytest

from gpucloud.advisor.recommend import AdvisorInputError, Job, Shape, recommend, resolve_shape, training_memory
from gpucloud.catalog import Catalog
from gpucloud.catalog.accelerators import accelerator

rec = importlib.import_module("gpucloud.advisor.recommend")

GIB = 1024**3
CATALOG = Catalog.load()


def llama(layers: int, h: int, heads: int, kv: int, vocab: int, ffn: int) -> float:
    """Llama decoder parameters: q, o (h x h), k, v (h x kv dims), gated MLP (3 h ffn), embeddings + LM head."""
    kv_dim = kv * (h // heads)
    return layers * (2 * h * h + 2 * h * kv_dim + 3 * h * ffn) + 2 * vocab * h


P_LLAMA3_8B = llama(32, 4096, 32, 8, 128256, 14336)
P_LLAMA3_70B = llama(80, 8192, 64, 8, 128256, 28672)


def by_type(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["instance_type"]: c for c in result["candidates"]}


def excluded(result: dict[str, Any]) -> dict[str, str]:
    return {e["instance_type"]: e["reason"] for e in result["excluded"]}


# ---- bad input: the whole message, field and example ---------------------------------------------------------------

TASKS = "['pretrain', 'full-finetune', 'lora', 'qlora', 'serve']"
MODELS = "['llama-2-13b', 'llama-2-7b', 'llama-3-70b', 'llama-3-8b', 'llama-3.1-405b', 'mistral-7b']"


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (Job("finetune", params_b=7), f"task 'finetune' is not one of {TASKS}"),  # type: ignore[arg-type]
        (Job("serve", model="gpt-9"), f"--model 'gpt-9' is not known; give one of {MODELS} or --params"),
        (
            Job("serve"),
            "give the model: --model NAME, --params BILLIONS, or a config (--layers and --hidden, optionally "
            "--heads, --kv-heads, --vocab, --ffn)",
        ),
        (Job("serve", layers=32), "give the model: --model NAME"),  # --layers without --hidden is no config
        (Job("serve", params_b=-1), "--params must be a positive number (e.g. 70 (billions of parameters))"),
        (Job("serve", params_b=math.inf), "--params must be a positive number (e.g. 70 (billions of parameters))"),
        (Job("serve", params_b=True), "--params must be a positive number"),  # type: ignore[arg-type]
        (Job("serve", layers=0, hidden=4096), "--layers must be a positive number (e.g. 32)"),
        (Job("serve", layers=32, hidden=-4096), "--hidden must be a positive number (e.g. 32)"),
        (Job("serve", layers=32, hidden=4096, heads=-32), "--heads must be a positive number (e.g. 32)"),
        (Job("serve", layers=32, hidden=4096, kv_heads=-8), "--kv-heads must be a positive number (e.g. 8)"),
        (Job("serve", layers=32, hidden=4096, vocab=-1), "--vocab must be a positive number (e.g. 128256)"),
        (Job("serve", layers=32, hidden=4096, ffn=-1), "--ffn must be a positive number (e.g. 14336)"),
        (Job("serve", params_b=7, context=0), "--context must be a whole number of at least 1 (e.g. 8192)"),
        (Job("serve", params_b=7, context=2.5), "--context must be a whole number"),  # type: ignore[arg-type]
        (Job("serve", params_b=7, concurrency=True), "--concurrency must be a whole"),  # type: ignore[arg-type]
        (Job("serve", params_b=7, concurrency=-1), "--concurrency must be a whole number of at least 1 (e.g. 16)"),
        (
            Job("serve", params_b=7, throughput=-5),
            "--throughput must be a positive number (e.g. 2000 (output tokens/s))",
        ),
        (
            Job("pretrain", params_b=7, tokens=1e9, precision="int4"),
            "--precision 'int4' for training: use one of ['bf16', 'fp16', 'fp8'] (QLoRA's 4-bit weights are "
            "implied by the task)",
        ),
        (
            Job("pretrain", params_b=7),
            "--tokens is required for training (tokens to train on, e.g. 1e12 or 2e8)",
        ),
        (Job("pretrain", params_b=7, tokens=-1), "--tokens must be a positive number (e.g. 1e12)"),
        (
            Job("pretrain", params_b=7, tokens=1e9, deadline_days=-1),
            "--deadline-days must be a positive number (e.g. 30)",
        ),
        (
            Job("pretrain", params_b=7, tokens=1e9, seq_len=0),
            "--seq-len must be a whole number of at least 1 (e.g. 4096)",
        ),
        (Job("pretrain", params_b=7, tokens=1e9, seq_len=4096.5), "--seq-len must be a whole"),  # type: ignore[arg-type]
        (
            Job("pretrain", params_b=7, tokens=1e9, micro_batch=0),
            "--micro-batch must be a whole number of at least 1 (e.g. 1)",
        ),
        (Job("pretrain", params_b=7, tokens=1e9, zero_stage=0), "--zero-stage must be 1, 2 or 3"),
        (
            Job("lora", params_b=7, tokens=1e9, lora_rank=0),
            "--lora-rank must be a whole number of at least 1 (e.g. 16)",
        ),
        (Job("lora", params_b=7, tokens=1e9, lora_rank=8.0), "--lora-rank must be a whole"),  # type: ignore[arg-type]
        (Job("lora", params_b=7, tokens=1e9, lora_rank=True), "--lora-rank must be a whole"),  # type: ignore[arg-type]
        (Job("pretrain", params_b=7, tokens=1e9, mfu=0), "--mfu must be a fraction in (0, 1], e.g. 0.4"),
        (Job("serve", params_b=7, mfu=1.01), "--mfu must be a fraction in (0, 1], e.g. 0.4"),
    ],
)
def test_bad_input_message_in_full(job: Job, message: str) -> None:
    with pytest.raises(AdvisorInputError) as info:
        recommend(job, CATALOG)
    assert str(info.value).startswith(message)
    if message.endswith((")", "3", "0.4")):  # a whole message: nothing after it
        assert str(info.value) == message


@pytest.mark.parametrize("top", [0, 1.5, True])
def test_top_must_be_a_whole_number_of_at_least_one(top: Any) -> None:
    with pytest.raises(AdvisorInputError) as info:
        recommend(Job("serve", model="llama-3-8b"), CATALOG, top=top)
    assert str(info.value) == "--top must be a whole number of at least 1"


def test_the_lowest_allowed_values_are_accepted() -> None:
    # top 1 keeps just the first choice; context, concurrency, seq-len, micro-batch and rank of 1 and an MFU of
    # exactly 1 are all inside their ranges.
    serve = recommend(Job("serve", model="llama-3-8b", context=1, concurrency=1, mfu=1.0), CATALOG, top=1)
    assert len(serve["candidates"]) == 1
    train = recommend(Job("lora", params_b=0.5, tokens=1e6, seq_len=1, micro_batch=1, lora_rank=1), CATALOG, top=1)
    assert len(train["candidates"]) == 1 and train["job"]["params"] == 0.5e9  # half a billion is positive
    for stage in (1, 2, 3):
        assert recommend(Job("pretrain", params_b=1, tokens=1e9, zero_stage=stage), CATALOG)["candidates"]


# ---- shapes ----------------------------------------------------------------------------------------------------------


def test_assumed_shape_from_a_parameter_count() -> None:
    # params ~ 12 L h^2 with h = 128 L: L = (58.08e9 / (12 x 128^2))^(1/3) = (295 410)^(1/3) = 66.60 -> 67 layers
    # (a count near the rounding edge: 12 x 129 x 128 would give 66.43 -> 66).
    shape, params, source = resolve_shape(Job("serve", params_b=58.08))
    # hidden 128 x 67 = 8576; MHA: 8576 / 128 = 67 heads and 67 KV heads; the Llama MLP: 8/3 x 8576 = 22 869.3,
    # rounded up to a multiple of 256: 256 x ceil(89.33) = 256 x 90 = 23 040.
    assert (shape.layers, shape.hidden, shape.heads, shape.kv_heads, shape.vocab, shape.ffn) == (
        67,
        8576,
        67,
        67,
        32000,
        23040,
    )
    assert type(shape.heads) is int and params == 58.08e9
    assert source == "assumed shape (hidden = 128 x layers, MHA, vocab 32000): give a config for GQA models"


def test_assumed_shape_of_a_tiny_model_has_one_layer_and_one_head() -> None:
    # 1e6 parameters: (1e6 / 196 608)^(1/3) = 1.72 -> 2 layers; 1e3: 0.17 -> 0, floored at 1 layer of hidden 128,
    # which is one head of 128.
    shape, _, _ = resolve_shape(Job("serve", params_b=1e-6))
    assert (shape.layers, shape.hidden, shape.heads, shape.kv_heads, shape.head_dim) == (1, 128, 1, 1, 128)
    assert type(shape.heads) is int
    # 8/3 x 128 = 341.3 -> 256 x ceil(1.33) = 512.
    assert shape.ffn == 512


def test_config_defaults_for_heads_and_ffn() -> None:
    # --hidden 8576 alone: heads = 8576 / 128 = 67, KV heads = heads, ffn = 256 x ceil(8/3 x 8576 / 256) = 23 040.
    shape, params, _ = resolve_shape(Job("serve", layers=2, hidden=8576))
    assert (shape.heads, shape.kv_heads, shape.ffn, shape.vocab) == (67, 67, 23040, 32000)
    assert params == llama(2, 8576, 67, 67, 32000, 23040)
    # A hidden size under 128 still has one head: 64 // 128 = 0 -> 1; and 192 // 128 = 1 head of 192.
    assert resolve_shape(Job("serve", layers=2, hidden=64))[0].heads == 1
    tiny = resolve_shape(Job("serve", layers=2, hidden=192))[0]
    assert (tiny.heads, tiny.head_dim) == (1, 192) and type(tiny.heads) is int


# ---- capability and figures ------------------------------------------------------------------------------------------


def test_int8_serving_needs_cuda_and_inferentia_is_not_a_training_target() -> None:
    result = recommend(Job("serve", model="llama-3-8b", precision="int8"), CATALOG, top=100)
    assert excluded(result)["inf2.xlarge"] == (
        "4/8-bit quantised kernels (bitsandbytes, AWQ/GPTQ) need CUDA; Inferentia2 has none"
    )
    # int8 weights: 1 byte per parameter; the KV cache stays bf16: 2 x 32 x 8 x 128 x 8192 x 16 x 2 B = 16 GiB,
    # on one L40S.
    l40s = by_type(result)["g6e.xlarge"]["memory_gib"]
    assert (l40s["weights"], l40s["kv_cache"]) == pytest.approx((P_LLAMA3_8B / GIB, 16))
    train = recommend(Job("lora", model="llama-3-8b", tokens=1e8), CATALOG)
    assert excluded(train)["inf2.xlarge"] == (
        "Inferentia2 (Neuron) is not a training target: " + accelerator("Inferentia2").source  # type: ignore[union-attr]
    )


def test_dense_figure_follows_the_precision() -> None:
    # A hypothetical H100 whose FP16 column differs from BF16: fp16 reads the FP16 figure, bf16 the BF16 one,
    # fp8 the accelerator's FP8 figure (H100 SXM: 1979 dense TFLOPS).
    spec = dataclasses.replace(CATALOG.get("p5.48xlarge"), fp16_tflops=500.0)
    h100 = accelerator("H100")
    assert h100 is not None
    assert rec._dense_tflops(spec, h100, "fp16") == 500.0
    assert rec._dense_tflops(spec, h100, "bf16") == 989.0
    assert rec._dense_tflops(spec, h100, "int8") == 989.0
    assert rec._dense_tflops(spec, h100, "fp8") == 1979


def test_fp8_training_uses_the_fp8_figure() -> None:
    result = recommend(Job("pretrain", model="llama-3-8b", tokens=1e9, precision="fp8"), CATALOG, top=100)
    p5 = by_type(result)["p5.48xlarge"]
    assert p5["dense_tflops"] == 1979
    # 6 N D over 8 x 1979 TFLOPS x 0.4.
    assert p5["hours"] == pytest.approx(6 * P_LLAMA3_8B * 1e9 / (8 * 1979e12 * 0.4) / 3600, rel=1e-13)
    assert p5["achievable_pflops"] == pytest.approx(8 * 1979 * 0.4 / 1000, rel=1e-13)


# ---- training memory -------------------------------------------------------------------------------------------------


def test_training_memory_scales_with_the_micro_batch_and_lora_gradients() -> None:
    shape = Shape(32, 4096, 32, 8, 128256, 14336)
    s, b, h, layers = 2048, 3, 4096, 32
    m = training_memory(Job("lora", tokens=1, seq_len=s, micro_batch=b, lora_rank=8), shape, P_LLAMA3_8B, 2)
    # Checkpointed: layer inputs 2 s b h L + one layer's working set 34 s b h; fp32 logits 4 s b V.
    assert m["activations"] == 2 * s * b * h * layers + 34 * s * b * h
    assert m["logits"] == 4 * s * b * 128256
    # Rank-8 adapters on q, k, v, o, gate, up, down: 8 x (2h + 2(h + 1024) + 2h + 3(h + 14336)) per layer.
    adapters = 32 * 8 * (2 * h + 2 * (h + 1024) + 2 * h + 3 * (h + 14336))
    assert (m["gradients"], m["optimizer"]) == (2 * adapters, 14 * adapters)
    # Frozen bf16 weights (2 B/param) sharded over the 2 accelerators.
    assert m["weights"] == pytest.approx(2 * P_LLAMA3_8B / 2)
    full = training_memory(Job("pretrain", tokens=1), shape, P_LLAMA3_8B, 2)
    # ZeRO-3 over 2: 2 + 2 + 12 B/param, each halved.
    assert (full["weights"], full["gradients"], full["optimizer"]) == pytest.approx(
        (P_LLAMA3_8B, P_LLAMA3_8B, 6 * P_LLAMA3_8B)
    )


def test_memory_bound_node_count_is_the_fewest_that_fit() -> None:
    # 70B full fine-tune, ZeRO-3, on 1-GPU L40S nodes with EFA (g6e.8xlarge): 16 B/param sharded over G GPUs plus
    # unsharded activations 4096 x 8192 x (2 x 80 + 34) B and logits 4 x 4096 x 128 256 B (8.02 GiB) must fit
    # 0.9 x 44.7 GiB: G >= 16 P / (usable - fixed) = 32.6 -> 33 nodes.
    result = recommend(Job("full-finetune", model="llama-3-70b", tokens=1e9), CATALOG, top=100)
    usable = 44.7 * GIB * 0.9
    fixed = 4096 * 8192 * (2 * 80 + 34) + 4 * 4096 * 128256
    nodes = math.ceil(16 * P_LLAMA3_70B / (usable - fixed))
    assert nodes == 33
    g6e = by_type(result)["g6e.8xlarge"]
    assert (g6e["nodes"], g6e["accelerators"], g6e["zero_stage"]) == (33, 33, 3)
    assert g6e["memory_gib"]["total"] <= 44.7 * 0.9


def test_reported_zero_stage_on_one_and_two_accelerators() -> None:
    # 3B full fine-tune (assumed shape: 25 layers of 3200): 16 B x 3e9 = 44.7 GiB of states plus ~1.5 GiB of
    # activations and logits: more than one L40S (40.2 GiB usable), half of it fits -> two 1-GPU EFA nodes.
    # One 80 GB H100 (72 GiB usable) holds it whole: no ZeRO on one accelerator.
    result = recommend(Job("full-finetune", params_b=3, tokens=1e8, zero_stage=2), CATALOG, top=100)
    two = by_type(result)["g6e.8xlarge"]
    assert (two["nodes"], two["accelerators"], two["zero_stage"]) == (2, 2, 2)
    one = by_type(result)["p5.4xlarge"]
    assert (one["nodes"], one["accelerators"], one["zero_stage"]) == (1, 1, 0)
    assert result["assumptions"]["zero_stage"] == 2 and result["assumptions"]["flops_per_token"] == "6N"
    # 70B QLoRA: NF4 weights 0.516 B x 70.55e9 = 33.9 GiB + activations, logits past one L40S -> two nodes,
    # the frozen weights sharded (FSDP, reported as stage 3) whatever --zero-stage says.
    qlora = recommend(Job("qlora", model="llama-3-70b", tokens=1e8, zero_stage=1), CATALOG, top=100)
    q2 = by_type(qlora)["g6e.8xlarge"]
    assert (q2["accelerators"], q2["zero_stage"]) == (2, 3)
    assert by_type(qlora)["p5.48xlarge"]["zero_stage"] == 3 and qlora["assumptions"]["zero_stage"] == 3


def test_activations_that_never_fit_name_both_sizes() -> None:
    # Llama-3-8B at 131 072 x 4: activations s b h (2 L + 34) and logits 4 s b V, against 0.9 x 22.35 GiB = 20.1.
    s, b = 131072, 4
    fixed = s * b * 4096 * (2 * 32 + 34) + 4 * s * b * 128256
    result = recommend(Job("pretrain", model="llama-3-8b", tokens=1e9, seq_len=s, micro_batch=b), CATALOG)
    assert excluded(result)["g6.xlarge"] == (
        f"one micro-batch's activations ({fixed / GIB:,.1f} GiB) exceed 20.1 GiB usable: "
        "lower --micro-batch or --seq-len"
    )


# ---- node limits -----------------------------------------------------------------------------------------------------


def test_exactly_max_nodes_for_a_deadline_is_allowed() -> None:
    # 1B parameters, 1 day, eight H100s per p5.48xlarge: GPUs needed = 6 N D / (86 400 s x 989e12 x 0.4).
    # D is picked so that this is 8 x 4095.02: 4096 nodes, the limit, still allowed. (p5.48xlarge's 3200 Gbps
    # moves 3 x 2 GB of ZeRO-3 traffic in 0.019 s against 0.062 s of compute per micro-batch: full speed.)
    per_gpu_day = 86400 * 989e12 * 0.4
    tokens = 8 * 4095.02 * per_gpu_day / 6e9
    result = recommend(Job("pretrain", params_b=1, tokens=tokens, deadline_days=1), CATALOG, top=100)
    assert by_type(result)["p5.48xlarge"]["nodes"] == 4096
    assert by_type(result)["p5.48xlarge"]["network"]["efficiency"] == 1.0


def test_exactly_256_capacity_block_nodes_are_allowed() -> None:
    # Trainium2 (16 chips, 655 TFLOPS each, Capacity Blocks only): 4090 chip-days of 6 N D -> ceil(4090 / 16) =
    # 256 nodes, the Capacity Block limit, still allowed.
    tokens = 4090 * 86400 * 655e12 * 0.4 / 6e9
    result = recommend(Job("pretrain", params_b=1, tokens=tokens, deadline_days=1), CATALOG, top=100)
    trn2 = by_type(result)["trn2.48xlarge"]
    assert (trn2["nodes"], trn2["price_basis"]) == (256, "capacity-block")


# ---- serving ---------------------------------------------------------------------------------------------------------


def test_serving_job_echoes_the_throughput_and_bandwidth_step() -> None:
    result = recommend(Job("serve", model="llama-3-8b", precision="fp8", concurrency=4, context=2048, throughput=300))
    assert result["job"]["throughput"] == 300
    g6 = by_type(result)["g6.xlarge"]
    # One L4: step = (N x 1 B + KV 2 x 32 x 8 x 128 x 2048 x 4 x 1 B) / (300 GB/s x 0.6).
    step = (P_LLAMA3_8B + 2 * 32 * 8 * 128 * 2048 * 4) / (300e9 * 0.6)
    assert g6["tokens_per_second_per_replica"] == pytest.approx(4 / step, rel=1e-12)
    # 300 tok/s at 4 / step = 89.7 per replica -> 4 replicas on four 1-GPU nodes.
    assert (g6["replicas"], g6["nodes"]) == (math.ceil(300 / (4 / step)), 4)


def test_compute_cap_is_exact() -> None:
    # 1024 sequences of 64 tokens on one L4 in fp8: 242.5 TFLOPS x 0.4 / (2 N) tokens/s.
    result = recommend(Job("serve", model="llama-3-8b", precision="fp8", concurrency=1024, context=64))
    g6 = by_type(result)["g6.xlarge"]
    assert g6["tokens_per_second_per_replica"] == pytest.approx(242.5e12 * 0.4 / (2 * P_LLAMA3_8B), rel=1e-14)


# ---- exclusions and the first choice ---------------------------------------------------------------------------------


def test_missing_capability_record_and_price_are_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    real_price = rec.hourly_price
    monkeypatch.setattr(rec, "accelerator", lambda name: None if name == "T4" else accelerator(name))
    monkeypatch.setattr(
        rec,
        "hourly_price",
        lambda spec, catalog: (None, "on-demand") if spec.instance_type == "g6.xlarge" else real_price(spec, catalog),
    )
    result = recommend(Job("serve", model="llama-3-8b"), CATALOG, top=100)
    why = excluded(result)
    assert why["g4dn.xlarge"] == "no capability record for T4 in catalog/accelerators.json"
    assert why["g6.xlarge"] == "no price (no On-Demand SKU and no Capacity Block rate)"
    assert "g6.xlarge" not in by_type(result) and "g4dn.xlarge" not in by_type(result)


def test_first_choice_without_a_deadline_has_no_deadline_clause() -> None:
    result = recommend(Job("qlora", model="llama-2-7b", tokens=1e8), CATALOG)
    # 4 N D at 40 % of one L40S's 362 dense BF16 TFLOPS, at g6e.xlarge's $1.861/h.
    p = llama(32, 4096, 32, 32, 32000, 11008)
    cost = 4 * p * 1e8 / (362e12 * 0.4) / 3600 * 1.861
    assert result["first_choice_reason"] == (
        f"1 x g6e.xlarge (1 x L40S): the cheapest to train 1e+08 tokens (${cost:,.0f})"
    )


def test_exactly_max_nodes_to_hold_the_model_is_allowed() -> None:
    # A 2-layer, hidden-128 config given a parameter count: unsharded activations 4096 x 128 x (2 x 2 + 34) B and
    # fp32 logits 4 x 4096 x 32 000 B; ZeRO-3 shards 16 B/param over G one-GPU L40S nodes (0.9 x 44.7 GiB usable).
    # P is picked so that 16 P / (usable - fixed) = 4095.5: 4096 nodes, the limit, still allowed.
    usable = 44.7 * GIB * 0.9
    fixed = 4096 * 128 * (2 * 2 + 34) + 4 * 4096 * 32000
    params = 4095.5 * (usable - fixed) / 16
    job = Job("full-finetune", params_b=params / 1e9, layers=2, hidden=128, tokens=1e6)
    result = recommend(job, CATALOG, top=100)
    assert by_type(result)["g6e.8xlarge"]["nodes"] == 4096
    # 1.5 times the parameters need ceil(1.5 x 4095.5) = ceil(6143.25) = 6144 nodes: past the limit.
    bigger = recommend(dataclasses.replace(job, params_b=1.5 * params / 1e9), CATALOG, top=100)
    assert excluded(bigger)["g6e.8xlarge"] == "needs 6144 nodes to hold the model (more than 4096)"


def test_serving_needs_both_a_dense_figure_and_a_bandwidth() -> None:
    # An L4 node whose bandwidth figure is missing cannot be sized for bandwidth-bound decode.
    spec = dataclasses.replace(CATALOG.get("g6.xlarge"), memory_bandwidth_gbps=None)
    l4 = accelerator("L4")
    assert l4 is not None
    shape, params, _ = resolve_shape(Job("serve", model="llama-3-8b"))
    why = rec._serve_candidate(Job("serve", model="llama-3-8b"), shape, params, spec, l4, 0.8048, "on-demand")
    assert why == "no dense BF16 or memory-bandwidth figure for L4"


def test_ten_candidates_by_default() -> None:
    # `--top` defaults to 10: an 8B bf16 serving job fits far more than ten catalog types (every GPU from 16 GB up).
    result = recommend(Job("serve", model="llama-3-8b"), CATALOG)
    assert len(result["candidates"]) == 10
    assert len(recommend(Job("serve", model="llama-3-8b"), CATALOG, top=100)["candidates"]) > 10
