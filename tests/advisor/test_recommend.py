"""`gpucloud recommend`: realistic workloads with their expected first choice and why, the memory and FLOP arithmetic,
capability checks and bad input."""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

import jsonschema
import pytest

from gpucloud.advisor.recommend import AdvisorInputError, Job, Shape, recommend, resolve_shape, training_memory
from gpucloud.catalog import Catalog

GIB = 1024**3


def llama(layers: int, h: int, heads: int, kv: int, vocab: int, ffn: int) -> float:
    """Parameters of a Llama-style decoder, written out: q, o (h x h), k, v (h x kv dims), gated MLP, embed + head."""
    kv_dim = kv * (h // heads)
    return layers * (h * h + h * h + h * kv_dim + h * kv_dim + 3 * h * ffn) + 2 * vocab * h


P_LLAMA2_7B = llama(32, 4096, 32, 32, 32000, 11008)  # 6.74e9
P_LLAMA3_8B = llama(32, 4096, 32, 8, 128256, 14336)  # 8.03e9
P_LLAMA3_70B = llama(80, 8192, 64, 8, 128256, 28672)  # 70.55e9


# The shipped catalog, loaded once: conftest clears get_catalog's cache before every test.
CATALOG = Catalog.load()
# Compiled once: jsonschema.validate() re-checks the schema itself on every call.
VALIDATOR = jsonschema.Draft202012Validator(
    json.loads(resources.files("gpucloud.advisor").joinpath("recommend.schema.json").read_text())
)


def first(job: Job, top: int = 60) -> tuple[dict[str, Any], dict[str, Any]]:
    result = recommend(job, CATALOG, top=top)
    VALIDATOR.validate(result)
    return result["candidates"][0], result


def by_type_all(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["instance_type"]: c for c in result["candidates"]}


def excluded(result: dict[str, Any]) -> dict[str, str]:
    return {e["instance_type"]: e["reason"] for e in result["excluded"]}


def test_public_configs_give_the_published_parameter_counts() -> None:
    published = {"Llama-2-7B": 6.74e9, "Llama-3-8B": 8.03e9, "Llama-3-70B": 70.55e9}
    computed = {"Llama-2-7B": P_LLAMA2_7B, "Llama-3-8B": P_LLAMA3_8B, "Llama-3-70B": P_LLAMA3_70B}
    for name, count in published.items():
        assert abs(computed[name] / count - 1) < 1e-3, name
    assert resolve_shape(Job("serve", model="llama-3-70b"))[1] == P_LLAMA3_70B


# ---- 1. 7B QLoRA fine-tune -> one GPU ---------------------------------------------------------------------------


def test_7b_qlora_fits_one_24gb_class_gpu_and_runs_on_a_single_gpu() -> None:
    c, result = first(Job("qlora", model="llama-2-7b", tokens=1e8))
    # NF4 weights (0.5 B + 0.127 bit of constants per param) + LoRA r16 adapters + checkpointed activations: ~6 GiB.
    assert (c["instance_type"], c["nodes"], c["accelerators"]) == ("g6e.xlarge", 1, 1)
    # Cost to finish: 4 N D at 40 % of the L40S's 362 dense BF16 TFLOPS, at $1.861/h.
    hours = 4 * P_LLAMA2_7B * 1e8 / (362e12 * 0.4) / 3600
    assert c["hours"] == pytest.approx(hours) and c["cost_usd"] == pytest.approx(1.861 * hours)
    assert c["memory_gib"]["weights"] == pytest.approx(P_LLAMA2_7B * (0.5 + 0.127 / 8) / GIB)
    assert result["first_choice_reason"].startswith("1 x g6e.xlarge (1 x L40S): the cheapest to train 1e+08 tokens")
    # The 24 GB-class single GPU (L4) holds it with room to spare and is the next single-GPU node.
    l4 = next(x for x in result["candidates"] if x["instance_type"] == "g6.xlarge")
    assert l4["accelerators"] == 1 and l4["memory_gib"]["total"] < 22.35 * 0.9 and l4["memory_gib"]["total"] < 7
    singles = [x["instance_type"] for x in result["candidates"] if x["accelerators"] == 1]
    # The next single-GPU choices: a larger L40S size (priced per region by the price book), then the L4.
    assert singles[:3] == ["g6e.xlarge", "g6e.2xlarge", "g6.xlarge"]
    # QLoRA's 4-bit kernels need CUDA: no Neuron type, and no Inferentia (not a training chip) at all.
    assert excluded(result)["trn1.32xlarge"].startswith("4/8-bit quantised kernels (bitsandbytes, AWQ/GPTQ) need CUDA")
    assert "not a training target" in excluded(result)["inf2.xlarge"]


# ---- 2. Llama-3-70B FP8 serving -> L40S / H100 / H200 class, never A100 or T4 -----------------------------------


def test_llama3_70b_fp8_serving_picks_l40s_and_never_a100_or_t4() -> None:
    c, result = first(Job("serve", model="llama-3-70b", precision="fp8"))
    assert c["instance_type"] == "g6e.12xlarge" and c["tensor_parallel"] == 4 and c["architecture"] == "Ada"
    # KV cache = 2 x 80 layers x 8 KV heads x 128 x 8192 context x 16 sequences x 1 B (fp8) = 20 GiB, over TP 4.
    kv = 2 * 80 * 8 * 128 * 8192 * 16 * 1
    assert c["memory_gib"]["kv_cache"] == pytest.approx(kv / GIB / 4)
    assert c["memory_gib"]["weights"] == pytest.approx(P_LLAMA3_70B / GIB / 4)
    assert c["cost_usd"] == pytest.approx(10.49264 * 730) and c["usd_per_hour"] == pytest.approx(10.49264)
    assert c["memory_gib"]["total"] == pytest.approx((P_LLAMA3_70B + kv) / GIB / 4)
    names = {x["instance_type"] for x in result["candidates"]}
    # Trainium2 is the one Neuron chip with FP8 (trainium2.rst: 1,287 dense FP8 TFLOPS per device).
    assert {x["architecture"] for x in result["candidates"]} <= {"Ada", "Hopper", "Blackwell", "Neuron"}
    assert {x["accelerator"] for x in result["candidates"] if x["architecture"] == "Neuron"} <= {"Trainium2"}
    assert not names & {"p4d.24xlarge", "p4de.24xlarge", "g4dn.xlarge", "g5.48xlarge"}
    why = excluded(result)
    assert why["p4d.24xlarge"] == "no FP8 on A100-40GB (Ampere): FP8 needs Hopper, Ada, Blackwell or Trainium2"
    assert why["g4dn.12xlarge"] == "no FP8 on T4 (Turing): FP8 needs Hopper, Ada, Blackwell or Trainium2"


# ---- 3. 70B pre-training on 1T tokens in 30 days ------------------------------------------------------------------


def test_70b_pretraining_node_count_follows_6nd_over_achievable_flops() -> None:
    c, result = first(Job("pretrain", model="llama-3-70b", tokens=1e12, deadline_days=30))
    seconds = 30 * 86400
    catalog = CATALOG
    for cand in [c, *(x for x in result["candidates"] if x["instance_type"] == "p5.48xlarge")]:
        spec = catalog.get(cand["instance_type"])
        achievable = spec.bf16_tflops * 1e12 * 0.40
        gpus = 6 * P_LLAMA3_70B * 1e12 / (seconds * achievable)
        nodes = gpus / spec.accelerator_count
        assert cand["nodes"] == pytest.approx(nodes, rel=0.15)
        assert cand["hours"] <= 30 * 24
    p5 = next(x for x in result["candidates"] if x["instance_type"] == "p5.48xlarge")
    assert p5["nodes"] == 52  # 412.7 H100s at 40 % of 989 TFLOPS -> 52 nodes of 8
    # The first choice is Trainium2 on Capacity Blocks (training may use blocks): 39 nodes for under 30 days, billed
    # as 30 whole block days (a 28-day block extended by 2), not a 35-day block.
    assert (c["instance_type"], c["nodes"], c["price_basis"]) == ("trn2.48xlarge", 39, "capacity-block")
    assert 29 * 24 < c["hours"] <= 30 * 24
    assert c["billed_hours"] == 30 * 24 and c["cost_usd"] == pytest.approx(39 * 35.7608 * 30 * 24)
    # A fine-tune of the same model is not given the pre-training fleet.
    ft, _ = first(Job("full-finetune", model="llama-3-70b", tokens=1e9))
    assert ft["nodes"] <= 2


# ---- 4-7. serving ---------------------------------------------------------------------------------------------------


def test_8b_serving_cheaply_is_inf2_or_g6_xlarge_never_a_capacity_block_type() -> None:
    c, result = first(Job("serve", model="llama-3-8b", concurrency=8, context=4096))
    assert c["instance_type"] == "inf2.xlarge" and c["cost_usd"] == pytest.approx(0.7582 * 730)
    # Weights 15.0 GiB + KV 4.0 GiB fill 85 % of an L4's 22.35 GiB: past the 80 % serving fill (vLLM's 0.9
    # budget less activation headroom), so g6.xlarge no longer fits one replica and trn1.2xlarge is next.
    assert result["candidates"][1]["instance_type"] == "trn1.2xlarge"
    g6 = next(x for x in result["excluded"] if x["instance_type"] == "g6.xlarge")
    assert "20 % headroom kept" in g6["reason"]
    assert not result["candidates"][0]["demoted"]
    assert result["candidates"][0]["flags"][0].startswith("Inferentia2 is an AWS Neuron device, not CUDA")
    trn2 = next(x for x in result["candidates"] if x["instance_type"] == "trn2.48xlarge")
    assert trn2["demoted"] and any(f.startswith("Capacity Blocks only") for f in trn2["flags"])
    positions = [x["demoted"] for x in result["candidates"]]
    assert positions == sorted(positions)  # every Capacity-Block-only type after every other


def test_405b_fp8_serving_prefers_on_demand_h100_over_a_cheaper_capacity_block_h200() -> None:
    c, result = first(Job("serve", model="llama-3.1-405b", precision="fp8", concurrency=8))
    assert c["instance_type"] == "p5.48xlarge" and c["tensor_parallel"] == 8
    p5e = next(x for x in result["candidates"] if x["instance_type"] == "p5e.48xlarge")
    assert p5e["cost_usd"] < c["cost_usd"] and p5e["demoted"]
    assert result["first_choice_reason"] == (
        "1 x p5.48xlarge, 1 replica(s) of tensor parallel 8 on H100: the cheapest per month that holds the weights "
        "and KV cache and serves the throughput"
    )


def test_405b_fp8_serving_with_capacity_blocks_allowed_takes_the_trn2_block() -> None:
    # FP8 on Trainium2 (trainium2.rst): 405 GB of FP8 weights on 8 of trn2's 16 x 96 GiB devices, at the $35.7608/h
    # block rate, below the H200 block (p5e.48xlarge, $47.76/h) that led before Trainium2's FP8 was counted.
    c, result = first(Job("serve", model="llama-3.1-405b", precision="fp8", concurrency=8, allow_capacity_blocks=True))
    assert (c["instance_type"], c["tensor_parallel"], c["price_basis"]) == ("trn2.48xlarge", 8, "capacity-block")
    assert c["cost_usd"] == pytest.approx(35.7608 * 730)
    assert result["candidates"][1]["instance_type"] == "p5e.48xlarge"
    assert result["assumptions"]["capacity_blocks"] == "allowed first"


def test_int4_7b_serving_fits_a_16gb_t4() -> None:
    c, result = first(Job("serve", model="mistral-7b", precision="int4", context=4096, concurrency=8))
    assert c["instance_type"] == "g4dn.xlarge"
    kv = 2 * 32 * 8 * 128 * 4096 * 8 * 2  # bf16 KV cache: weight-only quantisation
    assert c["memory_gib"]["kv_cache"] == pytest.approx(kv / GIB)
    assert c["memory_gib"]["total"] < 16 * 0.9
    assert excluded(result)["inf2.xlarge"].startswith("4/8-bit quantised kernels")


def test_fp16_7b_serving_with_mha_kv_does_not_fit_a_t4() -> None:
    _, result = first(Job("serve", model="llama-2-7b", precision="fp16", context=2048, concurrency=4))
    assert excluded(result)["g4dn.xlarge"] == (
        # 16.6 GiB > 80 % of 16 GiB (12.8): the serving fill keeps 20 % of memory for runtime and activations.
        "weights 12.6 GiB + KV cache 4.0 GiB do not fit one node at tensor parallel 1 (1 x 12.8 GiB, 20 % headroom "
        "kept; valid degrees [1]): lower --concurrency/--context or quantise"
    )


def test_throughput_target_adds_replicas_and_nodes() -> None:
    c, _ = first(Job("serve", model="llama-3-70b", precision="fp8", throughput=5000))
    assert (c["instance_type"], c["nodes"], c["tensor_parallel"]) == ("p5.48xlarge", 2, 2)
    assert c["replicas"] * c["tokens_per_second_per_replica"] >= 5000
    assert c["replicas"] == 8 and c["accelerators"] == 16
    assert (c["replicas"] - 1) * c["tokens_per_second_per_replica"] < 5000
    # Bandwidth-bound decode: 16 sequences per step reading weights + KV at 60 % of 2 x 3.35 TB/s.
    step = (P_LLAMA3_70B + 2 * 80 * 8 * 128 * 8192 * 16) / (2 * 3350e9 * 0.6)
    assert c["tokens_per_second_per_replica"] == pytest.approx(16 / step)
    assert c["bound"] == "memory bandwidth"


def test_high_throughput_8b_fp8_fills_an_h200_node_with_replicas() -> None:
    c, _ = first(Job("serve", model="llama-3-8b", precision="fp8", throughput=20000))
    assert (c["instance_type"], c["nodes"], c["tensor_parallel"], c["replicas"]) == ("p5en.48xlarge", 1, 1, 8)


# ---- 8-12. training -------------------------------------------------------------------------------------------------


def test_70b_qlora_needs_an_80gb_gpu_or_several_l40s() -> None:
    c, result = first(Job("qlora", model="llama-3-70b", tokens=1e8))
    # Cheapest FLOPs win: one 8 x B200 node, the frozen NF4 weights sharded over its 8 GPUs.
    assert (c["instance_type"], c["nodes"], c["accelerators"]) == ("p6-b200.48xlarge", 1, 8)
    # NF4 70B weights alone are 34 GiB: with activations and logits past one L40S's 40.2 GiB usable, so a
    # 1-GPU L40S node would need 2 nodes, and g6e.xlarge has no EFA.
    h100 = next(x for x in result["candidates"] if x["instance_type"] == "p5.4xlarge")
    assert h100["accelerators"] == 1 and h100["memory_gib"]["total"] > 44.7 * 0.9
    assert excluded(result)["g6e.xlarge"] == (
        "needs 2 nodes and has no EFA: collectives over TCP cannot keep 2 nodes busy"
    )


def test_8b_full_finetune_shards_16_bytes_per_param_with_zero3() -> None:
    c, _ = first(Job("full-finetune", model="llama-3-8b", tokens=1e9))
    assert (c["instance_type"], c["nodes"], c["accelerators"], c["zero_stage"]) == ("p6-b200.48xlarge", 1, 8, 3)
    assert c["memory_gib"]["optimizer"] == pytest.approx(12 * P_LLAMA3_8B / 8 / GIB)
    assert c["memory_gib"]["weights"] == pytest.approx(2 * P_LLAMA3_8B / 8 / GIB)
    assert c["hours"] == pytest.approx(6 * P_LLAMA3_8B * 1e9 / (8 * 2250e12 * 0.4) / 3600)


def test_70b_full_finetune_in_a_week_runs_on_trainium2_billed_in_whole_days() -> None:
    c, result = first(Job("full-finetune", model="llama-3-70b", tokens=1e9, deadline_days=7))
    assert (c["instance_type"], c["nodes"], c["accelerators"]) == ("trn2.48xlarge", 1, 16)
    assert c["hours"] == pytest.approx(6 * P_LLAMA3_70B * 1e9 / (16 * 655e12 * 0.4) / 3600)
    assert c["billed_hours"] == 48 and c["cost_usd"] == pytest.approx(35.7608 * 48)
    assert "not a training target" in excluded(result)["inf2.48xlarge"]


def test_8b_pretraining_with_a_deadline_scales_out() -> None:
    c, _ = first(Job("pretrain", model="llama-3-8b", tokens=1e11, deadline_days=10))
    gpus = 6 * P_LLAMA3_8B * 1e11 / (10 * 86400 * 655e12 * 0.4)
    assert (c["instance_type"], c["nodes"]) == ("trn2.48xlarge", math.ceil(gpus / 16))


def test_lora_keeps_frozen_bf16_weights_and_small_adapters() -> None:
    c, _ = first(Job("lora", model="llama-3-8b", tokens=2e8))
    assert (c["instance_type"], c["accelerators"]) == ("g6e.xlarge", 1)
    adapters = 32 * 16 * (2 * 4096 + 2 * (4096 + 1024) + 2 * 4096 + 3 * (4096 + 14336))
    assert c["memory_gib"]["weights"] == pytest.approx(2 * P_LLAMA3_8B / GIB)
    assert c["memory_gib"]["optimizer"] == pytest.approx(14 * adapters / GIB)
    assert c["hours"] == pytest.approx(4 * P_LLAMA3_8B * 2e8 / (362e12 * 0.4) / 3600)


def test_fp16_training_runs_on_t4_bf16_does_not() -> None:
    _, bf16 = first(Job("lora", model="llama-2-7b", tokens=1e8))
    assert excluded(bf16)["g4dn.12xlarge"] == "no BF16 on T4 (Turing): use --precision fp16"
    _, fp16 = first(Job("lora", model="llama-2-7b", tokens=1e8, precision="fp16"))
    t4 = next(x for x in fp16["candidates"] if x["instance_type"] == "g4dn.12xlarge")
    assert t4["dense_tflops"] == 65


def test_multi_node_training_needs_efa() -> None:
    _, result = first(Job("pretrain", model="llama-3-70b", tokens=1e12, deadline_days=30))
    assert excluded(result)["g6e.xlarge"].startswith("needs ") and "has no EFA" in excluded(result)["g6e.xlarge"]
    assert all(x["efa"] for x in result["candidates"])


# ---- memory arithmetic ---------------------------------------------------------------------------------------------


def test_training_memory_by_zero_stage_and_checkpointing() -> None:
    shape = Shape(32, 4096, 32, 8, 128256, 14336)
    p = shape.params
    s, h, layers = 4096, 4096, 32
    for stage, weights, grads, opt in (
        (1, 2 * p, 2 * p, 12 * p / 8),
        (2, 2 * p, 2 * p / 8, 12 * p / 8),
        (3, 2 * p / 8, 2 * p / 8, 12 * p / 8),
    ):
        m = training_memory(Job("pretrain", tokens=1, zero_stage=stage), shape, p, 8)
        assert (m["weights"], m["gradients"], m["optimizer"]) == pytest.approx((weights, grads, opt)), stage
    one = training_memory(Job("pretrain", tokens=1), shape, p, 1)
    assert (one["weights"], one["gradients"], one["optimizer"]) == pytest.approx((2 * p, 2 * p, 12 * p))
    assert one["activations"] == 2 * s * h * layers + 34 * s * h
    assert one["logits"] == 4 * s * 128256
    off = training_memory(Job("pretrain", tokens=1, activation_checkpointing=False, micro_batch=2), shape, p, 1)
    assert off["activations"] == 34 * s * 2 * h * layers
    assert one["total"] == pytest.approx(sum(v for k, v in one.items() if k != "total"))


def test_activations_that_never_fit_say_what_to_lower() -> None:
    result = recommend(Job("pretrain", model="llama-3-8b", tokens=1e9, seq_len=131072, micro_batch=4), CATALOG)
    assert result["candidates"] == []
    assert result["first_choice_reason"] == "no catalog type can run this job; see excluded for why"
    assert excluded(result)["g6.xlarge"].startswith("one micro-batch's activations (")
    assert excluded(result)["g6.xlarge"].endswith("lower --micro-batch or --seq-len")


def test_shape_from_params_and_from_a_config() -> None:
    shape, params, source = resolve_shape(Job("serve", params_b=7))
    assert (shape.layers, shape.hidden, shape.kv_heads, params) == (33, 4224, 33, 7e9)
    assert source.startswith("assumed shape")
    shape, params, source = resolve_shape(Job("serve", layers=80, hidden=8192, heads=64, kv_heads=8, vocab=128256))
    assert (shape.head_dim, shape.ffn, source) == (128, 22016, "given config")
    assert params == shape.params
    _, params, _ = resolve_shape(Job("serve", params_b=70, layers=80, hidden=8192))
    assert params == 70e9


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (Job("serve"), "give the model: --model NAME, --params BILLIONS, or a config"),
        (Job("serve", params_b=-1), "--params must be a positive number"),
        (Job("serve", model="gpt-9"), "--model 'gpt-9' is not known"),
        (Job("serve", params_b=7, precision="fp32"), "--precision 'fp32' for serving"),
        (Job("serve", params_b=7, concurrency=0), "--concurrency must be a whole number of at least 1"),
        (Job("serve", params_b=7, context=0), "--context must be a whole number of at least 1"),
        (Job("serve", params_b=7, throughput=0), "--throughput must be a positive number"),
        (Job("pretrain", params_b=7), "--tokens is required for training"),
        (Job("pretrain", params_b=7, tokens=1e9, precision="int4"), "--precision 'int4' for training"),
        (Job("pretrain", params_b=7, tokens=1e9, deadline_days=0), "--deadline-days must be a positive number"),
        (Job("pretrain", params_b=7, tokens=1e9, seq_len=0), "--seq-len must be a whole number"),
        (Job("pretrain", params_b=7, tokens=1e9, micro_batch=0), "--micro-batch must be a whole number"),
        (Job("pretrain", params_b=7, tokens=1e9, zero_stage=4), "--zero-stage must be 1, 2 or 3"),
        (Job("lora", params_b=7, tokens=1e9, lora_rank=0), "--lora-rank must be a whole number"),
        (Job("pretrain", params_b=7, tokens=1e9, mfu=1.5), "--mfu must be a fraction in (0, 1]"),
        (Job("serve", layers=32, hidden=4100, heads=32), "--hidden 4100 is not a multiple of --heads 32"),
        (Job("serve", layers=32, hidden=4096, heads=32, kv_heads=5), "--heads 32 is not a multiple of --kv-heads 5"),
        (Job("serve", layers=0, hidden=4096), "--layers must be a positive number"),
        (Job("finetune", params_b=7), "task 'finetune' is not one of"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_names_the_field(job: Job, message: str) -> None:
    with pytest.raises(AdvisorInputError) as info:
        recommend(job, CATALOG)
    assert message in str(info.value)


def test_training_result_states_its_assumptions_and_job() -> None:
    c, result = first(Job("pretrain", model="llama-3-8b", tokens=1e11, deadline_days=10, zero_stage=2))
    assert result["assumptions"] == {
        "mfu": 0.4,
        "mfu_source": "Dubey et al. 2024, The Llama 3 Herd of Models, table 4: 38-43 % BF16 MFU on H100",
        "usable_memory_fraction": 0.9,
        "flops_per_token": "6N",
        "zero_stage": 2,
        "sharding": "ZeRO-2 over every accelerator of the job (none on one accelerator)",
        "state_bytes_per_param": 16,
        "activation_checkpointing": True,
        "communication": (
            "multi-node: per micro-batch a node moves 3x the bf16 weight bytes (ZeRO-3: two all-gathers, one "
            "reduce-scatter; 2x for ZeRO-1/2 and LoRA/QLoRA) at 0.8 x its network line rate (and each PCIe-only "
            "GPU as much over its PCIe link), overlapped with compute; effective MFU = MFU / max(1, network time "
            "/ compute time)"
        ),
        "activations": "2 s b h L + 34 s b h (checkpointed layer inputs + one layer recomputed)",
    }
    assert result["job"] == {
        "task": "pretrain",
        "precision": "bf16",
        "params": P_LLAMA3_8B,
        "shape": {
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "vocab": 128256,
            "ffn": 14336,
        },
        "shape_source": "llama-3-8b config.json",
        "tokens": 1e11,
        "deadline_days": 10,
        "seq_len": 4096,
        "micro_batch": 1,
    }
    assert (c["zero_stage"], c["price_basis"], c["node_usd_hour"], c["efa"]) == (2, "capacity-block", 35.7608, True)
    assert c["achievable_pflops"] == pytest.approx(c["accelerators"] * 655 * 0.4 / 1000)
    assert c["days"] == pytest.approx(c["hours"] / 24) and c["usd_per_hour"] == pytest.approx(c["nodes"] * 35.7608)
    assert (result["price_region"], result["price_date"]) == ("us-east-1", CATALOG.price_date)
    assert result["first_choice_reason"] == (
        f"{c['nodes']} x trn2.48xlarge ({c['accelerators']} x Trainium2): the cheapest to train 1e+11 tokens "
        f"within 10 days (${c['cost_usd']:,.0f})"
    )


def test_lora_and_qlora_assumptions() -> None:
    _, lora = first(Job("lora", model="llama-3-8b", tokens=1e8, activation_checkpointing=False))
    assert lora["assumptions"]["flops_per_token"] == "4N (frozen weights: no weight-gradient GEMMs)"
    assert lora["assumptions"]["zero_stage"] == 3 and lora["assumptions"]["state_bytes_per_param"] == 2
    assert lora["assumptions"]["sharding"] == (
        "frozen weights sharded (FSDP) over the job's accelerators when more than one"
    )
    assert lora["assumptions"]["activations"] == "34 s b h L"
    assert lora["assumptions"]["activation_checkpointing"] is False
    _, qlora = first(Job("qlora", model="llama-3-8b", tokens=1e8))
    assert qlora["assumptions"]["state_bytes_per_param"] == 0.5 + 0.127 / 8
    one = next(x for x in qlora["candidates"] if x["accelerators"] == 1)
    eight = next(x for x in qlora["candidates"] if x["accelerators"] == 8)
    assert (one["zero_stage"], eight["zero_stage"]) == (0, 3)
    assert eight["memory_gib"]["weights"] == pytest.approx(one["memory_gib"]["weights"] / 8)
    assert one["memory_gib"]["gradients"] == pytest.approx(eight["memory_gib"]["gradients"])


def test_serving_result_states_its_assumptions_and_job() -> None:
    c, result = first(Job("serve", model="llama-3-8b", precision="fp8", concurrency=4, context=2048))
    assert result["assumptions"] == {
        "mfu": 0.4,
        "mfu_source": "Dubey et al. 2024, The Llama 3 Herd of Models, table 4: 38-43 % BF16 MFU on H100",
        "usable_memory_fraction": 0.9,
        "mbu": 0.6,
        "kv_cache": "2 x layers x kv_heads x head_dim x context x concurrency x bytes (fp8 1, else 2)",
        "throughput": "min(concurrency / ((weights + KV) / (tp x bandwidth x MBU)), tp x FLOP/s x MFU / 2N)",
        "capacity_blocks": "ranked last (not for steady serving)",
        "serving_memory_fill": 0.8,
        "tensor_parallel": "divides heads; divides KV heads or is a multiple of them (KV heads replicated)",
    }
    assert {k: result["job"][k] for k in ("context", "concurrency", "throughput")} == {
        "context": 2048,
        "concurrency": 4,
        "throughput": None,
    }
    assert "tokens" not in result["job"]
    # FP8 8B on one L4: the cheapest FP8-capable type.
    assert (c["instance_type"], c["tensor_parallel"], c["replicas"], c["nodes"]) == ("g6.xlarge", 1, 1, 1)
    assert c["dense_tflops"] == 242.5
    kv = 2 * 32 * 8 * 128 * 2048 * 4 * 1
    step = (P_LLAMA3_8B + kv) / (300e9 * 0.6)
    assert c["tokens_per_second_per_replica"] == pytest.approx(4 / step)
    assert c["usd_per_million_tokens"] == pytest.approx(0.8048 / (4 / step * 3600) * 1e6)
    assert c["billed_hours"] == 730 and c["hours"] == 730


def test_compute_bound_serving_at_high_concurrency() -> None:
    c, _ = first(Job("serve", model="llama-3-8b", precision="fp8", concurrency=1024, context=64))
    flops_cap = c["tensor_parallel"] * c["dense_tflops"] * 1e12 * 0.4 / (2 * P_LLAMA3_8B)
    assert c["bound"] == "compute" and c["tokens_per_second_per_replica"] == pytest.approx(flops_cap)


def test_types_without_figures_or_records_are_excluded_with_the_reason() -> None:
    _, result = first(Job("serve", model="llama-3-8b"))
    why = excluded(result)
    assert why["p3.2xlarge"] == "deprecated"
    assert why["g4ad.xlarge"].startswith("Radeon-Pro-V520 (RDNA) is not a serving target")
    # B300's dense BF16 (2,250 TFLOPS, NVIDIA HGX B300) is now in the catalog: it is ranked, no longer excluded.
    _, pretrain = first(Job("pretrain", model="llama-3-8b", tokens=1e9))
    assert "p6-b300.48xlarge" not in excluded(pretrain)
    b300 = next(c for c in pretrain["candidates"] if c["instance_type"] == "p6-b300.48xlarge")
    assert b300["dense_tflops"] == 2250
    # g7e's RTX PRO 6000 has no sourced dense figure: excluded with the reason.
    assert excluded(pretrain)["g7e.2xlarge"] == "no dense BF16 figure for RTX-PRO-6000-Server"


def test_config_defaults_follow_llama_conventions() -> None:
    shape, params, _ = resolve_shape(Job("serve", layers=32, hidden=4096))
    assert (shape.heads, shape.kv_heads, shape.vocab, shape.ffn) == (32, 32, 32000, 11008)
    assert params == pytest.approx(P_LLAMA2_7B)


def test_weight_only_quantised_serving_computes_in_fp16_where_bf16_is_missing() -> None:
    _, result = first(Job("serve", model="mistral-7b", precision="int4", context=4096, concurrency=8))
    by = {c["instance_type"]: c for c in result["candidates"]}
    assert (by["g4dn.xlarge"]["dense_tflops"], by["g6.xlarge"]["dense_tflops"]) == (65, 121)


def test_fp8_serving_without_an_fp8_figure_is_excluded() -> None:
    _, result = first(Job("serve", model="llama-3-70b", precision="fp8"))
    assert excluded(result)["p6-b300.48xlarge"] == "no dense FP8 or memory-bandwidth figure for B300"


def test_limits_on_nodes_are_explained() -> None:
    _, huge = first(Job("pretrain", model="llama-3.1-405b", tokens=15e12, deadline_days=90))
    why = excluded(huge)
    nodes = math.ceil(6 * llama(126, 16384, 128, 8, 128256, 53248) * 15e12 / (90 * 86400 * 655e12 * 0.4) / 16)
    assert why["trn2.48xlarge"] == f"needs {nodes} nodes; Capacity Blocks hold at most 256 instances"
    assert why["p5.4xlarge"].startswith("needs ") and why["p5.4xlarge"].endswith(
        " nodes to finish in 90 days (more than 4096)"
    )
    # ZeRO-1 keeps 2 + 2 B/param of 70B unsharded on every GPU: 262.8 GiB, more than any accelerator holds.
    zero1 = recommend(Job("full-finetune", model="llama-3-70b", tokens=1e9, zero_stage=1), CATALOG)
    assert zero1["candidates"] == []
    assert excluded(zero1)["g6e.48xlarge"] == "the unsharded part alone (270.8 GiB) exceeds 40.2 GiB usable"
    assert excluded(zero1)["g6.xlarge"].startswith("the unsharded part alone (")


# ---- serving: tensor parallelism and headroom (issue 27) -----------------------------------------------------------


def test_70b_serving_tensor_parallel_divides_64_heads_and_8_kv_heads() -> None:
    # Llama-3-70B config.json: 64 attention heads, 8 KV heads; TP 6 and 12 split neither evenly.
    _, result = first(Job("serve", model="llama-3-70b", precision="bf16"))
    for c in result["candidates"]:
        assert 64 % c["tensor_parallel"] == 0 and 8 % c["tensor_parallel"] == 0, c["instance_type"]
        assert c["headroom_pct"] >= 20.0, c["instance_type"]
    # inf2.24xlarge has 6 devices: TP 4 is the largest valid degree and 4 x 25.6 GiB cannot hold 171 GiB.
    assert "valid degrees [1, 2, 4]" in excluded(result)["inf2.24xlarge"]
    inf2 = next(c for c in result["candidates"] if c["instance_type"] == "inf2.48xlarge")
    assert inf2["tensor_parallel"] == 8 and inf2["flags"][0].startswith("Inferentia2 is an AWS Neuron device")


def test_tensor_parallel_past_kv_heads_replicates_them() -> None:
    from gpucloud.advisor.recommend import Shape, tensor_parallel_degrees

    llama70 = Shape(80, 8192, 64, 8, 128256, 28672)
    assert tensor_parallel_degrees(llama70, 12) == [1, 2, 4, 8]
    assert tensor_parallel_degrees(llama70, 16) == [1, 2, 4, 8, 16]
    # 40 heads, 40 KV heads (Llama-2-13B): 5 and 10 divide both.
    assert tensor_parallel_degrees(Shape(40, 5120, 40, 40, 32000, 13824), 12) == [1, 2, 4, 5, 8, 10]


# ---- training: the network (issue 27) ------------------------------------------------------------------------------


def test_70b_full_finetune_one_gpu_100_gbps_nodes_do_not_rank_level_with_p5_48xlarge() -> None:
    _, result = first(Job("full-finetune", model="llama-3-70b", tokens=1e9))
    small, big = by_type_all(result)["p5.4xlarge"], by_type_all(result)["p5.48xlarge"]
    # p5.4xlarge: 100 Gbps for one H100 (AWS P5 page); ZeRO-3 moves 3 x 141 GB per micro-batch in 42 s at 80 %
    # of line rate against 4.4 s of compute: about a tenth of the speed.
    assert small["network"]["gbps_per_accelerator"] == 100 and big["network"]["gbps_per_accelerator"] == 400
    assert small["network"]["efficiency"] == pytest.approx(0.1035, abs=1e-3)
    assert big["network"]["efficiency"] == 1.0 and big["network"]["scale_up"] == "nvswitch"
    # Tensor parallelism only within the NVLink domain: 8 on an NVSwitch node, none across 1-GPU nodes.
    assert (big["network"]["tensor_parallel_max"], small["network"]["tensor_parallel_max"]) == (8, 1)
    assert small["cost_usd"] > 5 * big["cost_usd"]


def test_70b_pretrain_pcie_and_one_gpu_fleets_do_not_rank_above_p5en() -> None:
    _, result = first(Job("pretrain", model="llama-3-70b", tokens=2e12, deadline_days=30))
    order = [c["instance_type"] for c in result["candidates"]]
    p5en = order.index("p5en.48xlarge")
    for slow in ("g6e.12xlarge", "g6e.48xlarge"):
        assert slow not in order[:p5en], slow
    # 826 x p5.4xlarge at full speed become ~8,000 at a tenth of it: past the 4,096-node limit.
    assert excluded(result)["p5.4xlarge"].startswith("needs 79")
