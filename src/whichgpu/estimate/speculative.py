"""Speculative decoding: what drafts the tokens, what it holds in memory, how many it gets
accepted (issue 28, item 2).

A drafter proposes ``k`` tokens; the target checks them all in one forward pass (the verify
step) and keeps the longest accepted prefix plus one token of its own. With a per-token
acceptance probability ``a`` (the model of Leviathan et al., 2023, arXiv 2211.17192, sec. 3.1)
a verify step yields ``(1 - a^(k+1)) / (1 - a)`` tokens per sequence on average.

Three drafters, as vLLM, SGLang and TensorRT-LLM name them:

- ``mtp``: the model's own multi-token-prediction layer(s), stored in its checkpoint
  (DeepSeek-V3/R1, GLM-4.5, Qwen3-Next, Qwen3.5/3.8, MiMo); one extra layer plus the shared
  LM head per drafted token. A model without MTP layers is refused.
- ``eagle``: an EAGLE-3 head trained for the target: one decoder layer of the target's width,
  a fusion layer (3 x hidden -> hidden) and a reduced draft vocabulary, in bf16.
- ``draft:MODEL``: a smaller model sharing the target's tokenizer, with its own weights and
  KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from whichgpu.errors import InputError
from whichgpu.messages import Message, msg
from whichgpu.vocabulary import Engine

if TYPE_CHECKING:
    from whichgpu.models.spec import ModelSpec


class SpecMethod(StrEnum):
    """How the draft tokens are made."""

    MTP = "mtp"
    EAGLE = "eagle"
    DRAFT = "draft"


# engines that run each drafter (their docs, 2025-26): vLLM docs/features/spec_decode (EAGLE,
# MTP, draft model); SGLang docs/advanced_features/speculative_decoding (EAGLE/EAGLE-3, NEXTN =
# MTP, draft model); TensorRT-LLM docs/source/features/speculative-decoding (EAGLE-3, MTP,
# draft-target); llama.cpp: a draft model (-md) and MTP layers (2026 builds, the
# sudoingX/qwen38-mtp runs in validation/incoming); ExLlamaV2 and MLX-LM: a draft model;
# transformers: assisted generation (a draft model).
ENGINES: dict[SpecMethod, frozenset[str]] = {
    SpecMethod.MTP: frozenset({"vllm", "sglang", "trtllm", "llamacpp"}),
    SpecMethod.EAGLE: frozenset({"vllm", "sglang", "trtllm"}),
    SpecMethod.DRAFT: frozenset({"vllm", "sglang", "trtllm", "llamacpp", "exllamav2", "mlx",
                                 "transformers"}),
}

# EAGLE-3 heads shipped for Llama 3.x keep a 32,000-token draft vocabulary
# (https://huggingface.co/yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, config.json draft_vocab_size)
EAGLE_DRAFT_VOCAB = 32_000


@dataclass(frozen=True)
class Speculation:
    """The drafter and how many tokens it proposes per verify step."""

    method: SpecMethod
    draft_tokens: int
    draft_model: ModelSpec | None = None
    draft_tokens_asked: bool = True  # False: the engine's documented default was taken

    def describe(self) -> Message:
        if self.draft_model is not None:
            return msg("speculative.describe.draft", "speculative decoding with the draft "
                       "model {model}, {k} draft token(s) per step",
                       model=self.draft_model.name, k=self.draft_tokens)
        if self.method is SpecMethod.MTP:
            return msg("speculative.describe.mtp", "speculative decoding with the model's MTP "
                       "layer, {k} draft token(s) per step", k=self.draft_tokens)
        return msg("speculative.describe.eagle", "speculative decoding with an EAGLE-3 head, "
                   "{k} draft token(s) per step", k=self.draft_tokens)

    def to_json(self) -> dict[str, object]:
        return {"method": str(self.method), "draft_tokens": self.draft_tokens,
                "draft_model": self.draft_model.name if self.draft_model is not None else None}


def default_draft_tokens(method: SpecMethod) -> int:
    """Draft tokens per step when not given (speed_constants: speculative_draft_tokens)."""
    from whichgpu.estimate.constants import speed_value

    return int(speed_value("speculative_draft_tokens")[str(method)])


def check_engine(spec: Speculation, engine: Engine) -> None:
    """Refuse a drafter the engine does not run, saying which engines do."""
    if engine not in ENGINES[spec.method]:
        raise InputError(msg("speculative.engine", "{engine} does not run {method} drafting "
                             "(engines that do: {engines})", engine=engine,
                             method=str(spec.method),
                             engines=", ".join(sorted(ENGINES[spec.method]))))


def acceptance(spec: Speculation) -> tuple[float, float, float]:
    """(low, typical, high) per-token acceptance probability of this drafter
    (speed_constants: speculative_acceptance, with its sources)."""
    from whichgpu.estimate.constants import speed_value

    lo, typ, hi = speed_value("speculative_acceptance")[str(spec.method)]
    return float(lo), float(typ), float(hi)


def tokens_per_step(alpha: float, k: int) -> float:
    """Expected tokens a verify step yields per sequence: the accepted prefix of ``k``
    drafts at per-token acceptance ``alpha``, plus the target's own token."""
    if alpha >= 1.0:
        return float(k + 1)
    return (1 - alpha ** (k + 1)) / (1 - alpha)


@dataclass(frozen=True)
class Drafter:
    """What one drafted token reads and computes, and what the drafter keeps in memory."""

    weight_bytes: float  # resident on the GPU(s)
    read_bytes: float  # streamed per drafted token at batch 1 (weights it touches)
    flops_per_token: float  # per sequence per drafted token
    layers: int  # forward layers per drafted token (launch overheads)
    kv_layers_share: float  # the drafter's KV per token as a share of the target's
    formula: str


def drafter(spec: Speculation, target: ModelSpec, bytes_per_param: float) -> Drafter:
    """The drafter's size from the target's real architecture (or the draft model's)."""
    h, v = target.hidden_size, target.vocab_size
    layers = max(target.num_layers, 1)
    if spec.method is SpecMethod.DRAFT:
        d = spec.draft_model
        assert d is not None
        total = d.params_total * bytes_per_param
        read = max(d.params_active - d.params.embedding, 1) * bytes_per_param
        if d.tie_word_embeddings:
            read += d.vocab_size * d.hidden_size * bytes_per_param
        share = (d.num_layers * d.num_kv_heads * (d.head_dim or 128)) / max(
            layers * max(target.num_kv_heads, 1) * (target.head_dim or 128), 1)
        return Drafter(total, read, 2 * read / bytes_per_param, max(d.num_layers, 1), share,
                       f"{d.name}: {d.params_total / 1e9:.2f}B parameters x "
                       f"{bytes_per_param:g} bytes")
    head = v * h  # the target's LM head, shared by MTP layers and not counted again
    if spec.method is SpecMethod.MTP:
        mtp = float(target.mtp_params)
        active = mtp * (target.params_active / max(target.params_total, 1)) if target.is_moe \
            else mtp
        return Drafter(mtp * bytes_per_param, (active + head) * bytes_per_param,
                       2 * (active + head), 1, 1.0 / layers,
                       f"{target.mtp_params / 1e9:.2f}B MTP parameters in the checkpoint x "
                       f"{bytes_per_param:g} bytes (the LM head is shared)")
    inter = target.intermediate_size or 4 * h
    if target.is_moe:
        inter = max(inter, 4 * h)  # EAGLE heads of MoE targets use a dense layer
    layer = 4 * h * h + 3 * h * inter
    params = layer + 3 * h * h + EAGLE_DRAFT_VOCAB * h
    return Drafter(params * 2.0, params * 2.0, 2 * params, 1, 1.0 / layers,
                   f"one decoder layer (4 x {h}^2 + 3 x {h} x {inter}) + fusion 3 x {h}^2 + "
                   f"draft head {EAGLE_DRAFT_VOCAB:,} x {h}, bf16 "
                   f"({params / 1e9:.2f}B parameters)")
