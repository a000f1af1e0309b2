"""The advisor's first choices against a table of cases written from public facts (issue 27, "Done when").

Each case names the job, the first choice that the public facts imply, and the facts: memory sizes from the
AWS instance pages and the accelerators' datasheets, model shapes from the models' config.json on Hugging Face,
prices from the catalog's sources (AWS Price List 2026-07-28, Vantage 2026-01-21, AWS Capacity Blocks page
2026-08-01), and the rules each case exercises. The expected type follows from those facts by hand: the
cheapest type whose memory holds the job (serving: per month; training: per dense TFLOP-hour when the network
keeps up), not from running the advisor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from gpucloud.advisor.recommend import MODELS, Job, recommend


@dataclass(frozen=True)
class Case:
    name: str
    job: Job
    first: str
    source: str
    # Extra facts about the first choice: key -> expected value.
    checks: dict[str, Any] = field(default_factory=dict)


CASES: tuple[Case, ...] = (
    Case(
        "8b-bf16-serve-fits-one-inferentia2",
        Job("serve", model="llama-3-8b", concurrency=8, context=4096),
        "inf2.xlarge",
        "Llama-3-8B config.json: 8.0B params (15.0 GiB bf16), 32 layers x 8 KV heads x 128 -> 4.0 GiB KV at "
        "4096 x 8. AWS Inf2 page: one Inferentia2 with 32 GB at $0.7582/h, the cheapest type on which 19.0 GiB "
        "stays within 80 % of memory; L4/A10G's 22.35 GiB (describe_instance_types) allow 17.9 GiB.",
        {"tensor_parallel": 1},
    ),
    Case(
        "8b-int4-serve-cheapest-cuda-gpu",
        Job("serve", model="llama-3-8b", precision="int4", concurrency=8, context=4096),
        "g4dn.xlarge",
        "AWQ/GPTQ int4 kernels are CUDA-only (AutoAWQ, vLLM docs); 4.0 GiB weights + 4.0 GiB KV fit the 16 GB "
        "T4 (NVIDIA T4 datasheet) of g4dn.xlarge, the cheapest NVIDIA type at $0.526/h (AWS G4 page).",
    ),
    Case(
        "8b-int8-serve-cheapest-cuda-gpu",
        Job("serve", model="llama-3-8b", precision="int8", concurrency=8, context=4096),
        "g4dn.xlarge",
        "int8 weight-only quantisation needs CUDA kernels; 7.5 GiB + 4.0 GiB KV < 12.8 GiB (80 % of a T4's 16 GB).",
    ),
    Case(
        "mistral-int4-serve-t4",
        Job("serve", model="mistral-7b", precision="int4", concurrency=8, context=4096),
        "g4dn.xlarge",
        "Mistral-7B config.json: 7.2B params, 8 KV heads; int4 3.4 GiB + 4.0 GiB KV fit a T4 (16 GB).",
    ),
    Case(
        "mistral-bf16-serve-not-a-t4",
        Job("serve", model="mistral-7b", concurrency=1, context=4096),
        "inf2.xlarge",
        "13.5 GiB bf16 weights + 0.5 GiB KV exceed 80 % of a T4's 16 GB (12.8 GiB): the 32 GB Inferentia2 at "
        "$0.7582/h undercuts the L4 (g6.xlarge, $0.8048/h).",
    ),
    Case(
        "llama2-7b-fp16-mha-serve",
        Job("serve", model="llama-2-7b", precision="fp16", concurrency=4, context=2048),
        "inf2.xlarge",
        "Llama-2-7B config.json: 32 KV heads (no GQA): 12.6 GiB fp16 + 4.0 GiB KV = 16.6 GiB > a T4's 16 GB.",
    ),
    Case(
        "70b-bf16-serve-tp-divides-heads",
        Job("serve", model="llama-3-70b"),
        "inf2.48xlarge",
        "Llama-3-70B config.json: 64 heads, 8 KV heads: TP 8 over 8 of inf2.48xlarge's 12 x 32 GB Inferentia2 "
        "(AWS Inf2 page) holds 131 GiB + 40 GiB KV at 21.4 GiB each; inf2.24xlarge's 6 devices allow TP 4 only "
        "(6 divides neither 64 nor 8) and 4 x 25.6 GiB is too small. $12.98/h is the cheapest node that holds it.",
        {"tensor_parallel": 8},
    ),
    Case(
        "70b-bf16-serve-2000-tok-s",
        Job("serve", model="llama-3-70b", throughput=2000),
        "p5en.48xlarge",
        "At 2000 output tok/s decode is bandwidth-bound: H200's 4.8 TB/s (NVIDIA H200 datasheet) with 141 GB lets "
        "TP 2 replicas (4 per node) beat 3 x trn1.32xlarge (Trainium 820 GB/s, AWS Neuron docs) on $/month.",
        {"tensor_parallel": 2, "nodes": 1},
    ),
    Case(
        "70b-fp8-serve-ada",
        Job("serve", model="llama-3-70b", precision="fp8"),
        "g6e.12xlarge",
        "FP8 tensor cores: Ada/Hopper/Blackwell only (NVIDIA Transformer Engine docs). 65.7 GiB fp8 + 20 GiB fp8 "
        "KV over TP 4 fits 4 x L40S 48 GB (AWS G6e page) at $10.49/h, the cheapest FP8 node that holds it.",
        {"tensor_parallel": 4},
    ),
    Case(
        "70b-int4-serve-eight-t4",
        Job("serve", model="llama-3-70b", precision="int4"),
        "g4dn.metal",
        "int4 weights 32.9 GiB + bf16 KV 40 GiB over TP 8 = 9.1 GiB per T4 (16 GB): g4dn.metal's 8 x T4 at "
        "$7.824/h is the cheapest CUDA node with that much memory.",
        {"tensor_parallel": 8},
    ),
    Case(
        "405b-fp8-serve-one-h100-node",
        Job("serve", model="llama-3.1-405b", precision="fp8"),
        "p5.48xlarge",
        "Meta, 'Introducing Llama 3.1' (2024-07-23): the 405B model was quantised to FP8 to run on a single "
        "server node; 8 x H100 80 GB (AWS P5 page) on demand at $55.04/h, cheaper than p5en ($63.30/h); "
        "Capacity-Block-only p5e ranks last for steady serving.",
        {"tensor_parallel": 8},
    ),
    Case(
        "405b-bf16-serve-needs-h200",
        Job("serve", model="llama-3.1-405b"),
        "p5en.48xlarge",
        "810 GB of bf16 weights exceed 8 x 80 GB H100 (640 GB); 8 x 141 GB H200 (AWS P5en page) at $63.296/h is "
        "the cheapest on-demand node that holds them (B200 $113.93/h).",
        {"tensor_parallel": 8},
    ),
    Case(
        "405b-bf16-serve-capacity-blocks-allowed",
        Job("serve", model="llama-3.1-405b", allow_capacity_blocks=True),
        "trn2.48xlarge",
        "With blocks allowed: trn2.48xlarge's 16 x 96 GB Trainium2 (1.5 TB, AWS Trn2 page) at a $35.76/h block "
        "rate holds 810 GB at TP 16 (divides 128 heads and is a multiple of 8 KV heads).",
        {"tensor_parallel": 16},
    ),
    Case(
        "8b-qlora-cheapest-tflop",
        Job("qlora", model="llama-3-8b", tokens=1e8),
        "g6e.xlarge",
        "QLoRA (Dettmers et al. 2023) needs bitsandbytes (CUDA). One L40S (48 GB, 362 dense BF16 TFLOPS, NVIDIA "
        "L40S datasheet) at $1.861/h is the lowest $/TFLOP-hour of all CUDA types (0.0051; B200 0.0063, "
        "H100 0.0070).",
    ),
    Case(
        "8b-lora-cheapest-tflop",
        Job("lora", model="llama-3-8b", tokens=1e8),
        "g6e.xlarge",
        "LoRA 8B: 15 GiB frozen bf16 weights fit one L40S 48 GB; lowest $/dense-TFLOP-hour of the types that hold it.",
    ),
    Case(
        "70b-qlora-one-node",
        Job("qlora", model="llama-3-70b", tokens=1e8),
        "p6-b200.48xlarge",
        "70B NF4 weights (34 GiB) + seq-4096 activations and logits exceed one L40S's 40 GiB usable, so a single "
        "L40S is out; of CUDA nodes that hold it, B200 (2250 TFLOPS, 8 per node, $113.93/h) has the lowest "
        "$/TFLOP-hour (0.0063 against H100's 0.0070 and 4 x L40S's 0.0072).",
    ),
    Case(
        "8b-full-finetune-b200",
        Job("full-finetune", model="llama-3-8b", tokens=1e9),
        "p6-b200.48xlarge",
        "16 B/param Adam state (ZeRO, Rajbhandari et al. 2020): 120 GiB over 8 GPUs fits one node; B200's "
        "$/dense-BF16-TFLOP-hour (0.0063) is the lowest among on-demand nodes that hold it; Trainium2, cheaper per "
        "TFLOP-hour, is sold only in Capacity Blocks billed in whole days (24 h for this 1.9 h job).",
    ),
    Case(
        "70b-full-finetune-one-trn2",
        Job("full-finetune", model="llama-3-70b", tokens=1e9),
        "trn2.48xlarge",
        "70.6B x 16 B = 1.13 TB of Adam state: one trn2.48xlarge (16 x 96 GB, AWS Trn2 page) holds it; at the "
        "$35.76/h block rate and 16 x ~660 dense BF16 TFLOPS (AWS Trainium2 page) it is the cheapest "
        "per TFLOP-hour (0.0034).",
        {"nodes": 1},
    ),
    Case(
        "70b-full-finetune-fp8-trainium2-block",
        Job("full-finetune", model="llama-3-70b", tokens=1e9, precision="fp8"),
        "trn2.48xlarge",
        "FP8 on Trainium2 (AWS Neuron trainium2.rst: 1,287 dense FP8 TFLOPS per device): 16 devices at the $35.76/h "
        "block rate ($858 for 1e9 tokens) undercut B200 on demand, 4500 dense FP8 TFLOPS (NVIDIA HGX B200 datasheet) "
        "at $113.93/h ($930), which FP8 led before Trainium2's FP8 was counted.",
        {"nodes": 1},
    ),
    Case(
        "70b-pretrain-30-days",
        Job("pretrain", model="llama-3-70b", tokens=2e12, deadline_days=30),
        "trn2.48xlarge",
        "6 N D = 8.5e23 FLOPs in 30 days: trn2.48xlarge at the block rate is the cheapest per TFLOP-hour, and "
        "3200 Gbps EFA v3 for 16 chips (AWS Trn2 page) keeps ZeRO-3 traffic under compute.",
    ),
    Case(
        "8b-pretrain-30-days",
        Job("pretrain", model="llama-3-8b", tokens=1e12, deadline_days=30),
        "trn2.48xlarge",
        "4.8e22 FLOPs in 30 days on the cheapest per TFLOP-hour node with the network to scale (Trn2: 3200 Gbps).",
    ),
    Case(
        "8b-pretrain-fp8-trainium2-blocks",
        Job("pretrain", model="llama-3-8b", tokens=1e12, deadline_days=30, precision="fp8"),
        "trn2.48xlarge",
        "FP8 on Trainium2 (AWS Neuron trainium2.rst: 1,287 dense FP8 TFLOPS per device): 16 x 1,287 at the $35.76/h "
        "block rate is $0.0017 per FP8-TFLOP-hour, below H200's 1979 at the $47.76/h block (0.0030; AWS Capacity "
        "Blocks page).",
    ),
    Case(
        "405b-pretrain-60-days",
        Job("pretrain", model="llama-3.1-405b", tokens=1e12, deadline_days=60),
        "trn2.48xlarge",
        "Llama 3.1 405B config.json: 126 layers, hidden 16384; 2.4e24 FLOPs in 60 days on 113 Trn2 nodes, under the "
        "256-instance Capacity Block limit (AWS EC2 user guide).",
    ),
    Case(
        "7b-fp16-finetune-no-bf16-needed",
        Job("full-finetune", model="llama-2-7b", tokens=1e8, precision="fp16"),
        "p6-b200.48xlarge",
        "FP16 fine-tune of Llama-2-7B (6.7B params, 100 GiB Adam state): one 8-GPU node holds it; B200 has the "
        "lowest $/FP16-TFLOP-hour among nodes that do.",
    ),
)


def first_choice(job: Job) -> dict[str, Any]:
    result = recommend(job, top=3)
    assert result["candidates"], result["excluded"]
    return result["candidates"][0]


def test_the_table_has_at_least_20_sourced_cases() -> None:
    assert len(CASES) >= 20
    assert len({c.name for c in CASES}) == len(CASES)
    assert all(len(c.source) > 40 for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_first_choice_matches_public_facts(case: Case) -> None:
    chosen = first_choice(case.job)
    assert chosen["instance_type"] == case.first, case.source
    for key, value in case.checks.items():
        assert chosen[key] == value, (key, case.source)
    if case.job.task == "serve":
        # Every serving pick splits heads evenly and keeps at least 20 % of memory free (issue 27).
        _layers, _hidden, heads, kv_heads, _vocab, _ffn = MODELS[case.job.model or ""]
        tp = chosen["tensor_parallel"]
        assert heads % tp == 0 and (kv_heads % tp == 0 or tp % kv_heads == 0)
        assert chosen["headroom_pct"] >= 20.0
    if chosen["architecture"] == "Neuron":
        assert any("AWS Neuron device, not CUDA" in f for f in chosen["flags"])
