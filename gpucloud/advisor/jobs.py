"""The job a `gpucloud recommend` run sizes: the task, the model's shape (from a public config, or given layer by
layer), precision, tokens, deadline and serving load; validated once, with one message naming the flag.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

Task = Literal["pretrain", "full-finetune", "lora", "qlora", "serve"]


TASKS: Final = ("pretrain", "full-finetune", "lora", "qlora", "serve")


TRAIN_PRECISIONS: Final = ("bf16", "fp16", "fp8")


SERVE_BYTES: Final[dict[str, float]] = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


DEFAULT_MFU: Final = 0.40


# Beyond this a job is a different planning problem (and past any single region's GPU capacity).
MAX_NODES: Final = 4096


# Public model configs (the models' config.json on Hugging Face): layers, hidden, heads, kv_heads, vocab, ffn.
MODELS: Final[dict[str, tuple[int, int, int, int, int, int]]] = {
    "llama-2-7b": (32, 4096, 32, 32, 32000, 11008),
    "llama-2-13b": (40, 5120, 40, 40, 32000, 13824),
    "mistral-7b": (32, 4096, 32, 8, 32000, 14336),
    "llama-3-8b": (32, 4096, 32, 8, 128256, 14336),
    "llama-3-70b": (80, 8192, 64, 8, 128256, 28672),
    "llama-3.1-405b": (126, 16384, 128, 8, 128256, 53248),
}


class AdvisorInputError(ValueError):
    """Bad job description; the message names the field and what to give instead."""


@dataclass(frozen=True, slots=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    vocab: int
    ffn: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def params(self) -> float:
        """Decoder parameters: attention (q, o full; k, v at kv_heads), a gated MLP, embeddings and the LM head."""
        kv = self.kv_heads * self.head_dim
        per_layer = 2 * self.hidden * self.hidden + 2 * self.hidden * kv + 3 * self.hidden * self.ffn
        return self.layers * per_layer + 2 * self.vocab * self.hidden

    def lora_params(self, rank: int) -> float:
        """Adapter parameters with rank r on all seven linear maps of every layer: r (in + out) each."""
        kv = self.kv_heads * self.head_dim
        h = self.hidden
        per_layer = rank * (2 * h + 2 * (h + kv) + 2 * h + 3 * (h + self.ffn))
        return self.layers * per_layer


@dataclass(frozen=True, slots=True)
class Job:
    task: Task
    params_b: float | None = None
    model: str | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    ffn: int | None = None
    precision: str = "bf16"
    seq_len: int = 4096
    micro_batch: int = 1
    tokens: float | None = None
    deadline_days: float | None = None
    context: int = 8192
    concurrency: int = 16
    throughput: float | None = None
    mfu: float = DEFAULT_MFU
    zero_stage: int = 3
    activation_checkpointing: bool = True
    lora_rank: int = 16
    allow_capacity_blocks: bool = False


def _positive(value: float | None, flag: str, example: str) -> None:
    if value is not None and (isinstance(value, bool) or not value > 0 or not math.isfinite(value)):
        raise AdvisorInputError(f"{flag} must be a positive number (e.g. {example})")


def resolve_shape(job: Job) -> tuple[Shape, float, str]:
    """The model's shape, its parameter count and where both came from."""
    if job.model is not None:
        if job.model not in MODELS:
            raise AdvisorInputError(f"--model {job.model!r} is not known; give one of {sorted(MODELS)} or --params")
        shape = Shape(*MODELS[job.model])
        return shape, shape.params, f"{job.model} config.json"
    if job.layers is not None and job.hidden is not None:
        for flag, value in (("--layers", job.layers), ("--hidden", job.hidden), ("--heads", job.heads)):
            _positive(value, flag, "32")
        _positive(job.kv_heads, "--kv-heads", "8")
        _positive(job.vocab, "--vocab", "128256")
        _positive(job.ffn, "--ffn", "14336")
        hidden = int(job.hidden)
        heads = job.heads or max(1, hidden // 128)
        if hidden % heads:
            raise AdvisorInputError(f"--hidden {hidden} is not a multiple of --heads {heads}")
        kv_heads = job.kv_heads or heads
        if heads % kv_heads:
            raise AdvisorInputError(f"--heads {heads} is not a multiple of --kv-heads {kv_heads}")
        shape = Shape(
            int(job.layers),
            hidden,
            heads,
            kv_heads,
            job.vocab or 32000,
            job.ffn or 256 * math.ceil(hidden * 8 / 3 / 256),
        )
        params = job.params_b * 1e9 if job.params_b is not None else shape.params
        return shape, params, "given config"
    if job.params_b is None:
        raise AdvisorInputError(
            "give the model: --model NAME, --params BILLIONS, or a config (--layers and --hidden, "
            "optionally --heads, --kv-heads, --vocab, --ffn)"
        )
    _positive(job.params_b, "--params", "70 (billions of parameters)")
    params = job.params_b * 1e9
    # Without a config: a Llama-like shape with hidden = 128 x layers, so params ~ 12 L h^2; MHA (kv = heads),
    # which over- rather than under-states the KV cache of a GQA model.
    layers = max(1, round((params / (12 * 128 * 128)) ** (1 / 3)))
    hidden = 128 * layers
    heads = max(1, hidden // 128)
    shape = Shape(layers, hidden, heads, heads, 32000, 256 * math.ceil(hidden * 8 / 3 / 256))
    return shape, params, "assumed shape (hidden = 128 x layers, MHA, vocab 32000): give a config for GQA models"


def _validate(job: Job) -> None:
    if job.task not in TASKS:
        raise AdvisorInputError(f"task {job.task!r} is not one of {list(TASKS)}")
    if job.task == "serve":
        if job.precision not in SERVE_BYTES:
            raise AdvisorInputError(f"--precision {job.precision!r} for serving: use one of {sorted(SERVE_BYTES)}")
        for flag, value, example in (("--context", job.context, "8192"), ("--concurrency", job.concurrency, "16")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AdvisorInputError(f"{flag} must be a whole number of at least 1 (e.g. {example})")
        _positive(job.throughput, "--throughput", "2000 (output tokens/s)")
    else:
        if job.precision not in TRAIN_PRECISIONS:
            raise AdvisorInputError(
                f"--precision {job.precision!r} for training: use one of {list(TRAIN_PRECISIONS)} "
                "(QLoRA's 4-bit weights are implied by the task)"
            )
        if job.tokens is None:
            raise AdvisorInputError("--tokens is required for training (tokens to train on, e.g. 1e12 or 2e8)")
        _positive(job.tokens, "--tokens", "1e12")
        _positive(job.deadline_days, "--deadline-days", "30")
        for flag, value, example in (("--seq-len", job.seq_len, "4096"), ("--micro-batch", job.micro_batch, "1")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AdvisorInputError(f"{flag} must be a whole number of at least 1 (e.g. {example})")
        if job.zero_stage not in (1, 2, 3):
            raise AdvisorInputError("--zero-stage must be 1, 2 or 3")
        if isinstance(job.lora_rank, bool) or not isinstance(job.lora_rank, int) or job.lora_rank < 1:
            raise AdvisorInputError("--lora-rank must be a whole number of at least 1 (e.g. 16)")
    if not 0 < job.mfu <= 1:
        raise AdvisorInputError("--mfu must be a fraction in (0, 1], e.g. 0.4")
