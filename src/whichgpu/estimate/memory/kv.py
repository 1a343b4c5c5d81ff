"""KV cache per sequence, layer type by layer type (GQA/MQA, MLA, sliding window, SSM state)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from whichgpu.estimate.constants import memory_value
from whichgpu.models.spec import LayerSpec, ModelSpec

# Engines that give sliding-window layers full-length pages in hybrid models (hf-mem #60/#70:
# capping them under-counts gpt-oss-20b by 49 % on vLLM). Others keep only the window.
_FULL_PAGES_FOR_SLIDING = ("vllm", "sglang", "trtllm")
# Engines whose MLA cache holds the compressed latent; transformers stores decompressed K/V.
_LATENT_MLA = ("vllm", "sglang", "trtllm", "llamacpp", "mlc")


@dataclass(frozen=True)
class KVCache:
    bytes_per_sequence: int
    context_cached: int  # context after the engine's block rounding
    formula: str
    by_kind: dict[str, int]


def state_element_bytes(engine: str) -> int:
    """Bytes per element of a linear-attention / SSM state: llama.cpp keeps recurrent states in
    F32 (estimators.md 5.2, gguf-parser's recurrent path); vLLM, SGLang and transformers keep
    them in the model's 16-bit dtype (vLLM mamba_cache_dtype 'auto'). A quantized KV-cache
    dtype does not apply to them."""
    return 4 if engine in ("llamacpp", "mlc") else 2


def cached_context(context: int, engine: str) -> int:
    """Context rounded up to the engine's allocation unit (vLLM blocks, llama.cpp padding)."""
    if engine in ("vllm", "sglang", "trtllm"):
        block = int(memory_value("vllm_block_tokens"))
    elif engine in ("llamacpp", "mlc"):
        block = int(memory_value("llamacpp_ctx_pad_tokens"))
    else:
        return context
    return int(math.ceil(context / block) * block)


def _layers(model: ModelSpec) -> tuple[LayerSpec, ...]:
    if model.layers:
        return model.layers
    return tuple(LayerSpec("full", None, model.num_kv_heads, model.head_dim, model.head_dim)
                 for _ in range(model.num_layers))


def kv_cache(model: ModelSpec, context: int, kv_bytes: float, engine: str) -> KVCache:
    """Bytes of KV cache (and recurrent state) one sequence of ``context`` tokens holds."""
    ctx = cached_context(context, engine)
    by_kind: dict[str, int] = {}
    total = 0.0
    mla = model.mla
    for layer in _layers(model):
        if layer.attention == "linear":
            size = float(layer.state_elements * state_element_bytes(engine))
            kind = "linear-state"
        else:
            tokens = ctx
            if layer.attention == "sliding" and layer.window and engine not in \
                    _FULL_PAGES_FOR_SLIDING:
                tokens = min(ctx, cached_context(layer.window, engine))
            if mla is not None and engine in _LATENT_MLA:
                per_token = mla.cache_elements_per_token * kv_bytes
                kind = "mla-latent"
            elif mla is not None:
                heads = model.num_attention_heads
                per_token = heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim
                                     + mla.v_head_dim) * kv_bytes
                kind = "mla-decompressed"
            else:
                v_dim = layer.v_head_dim or layer.head_dim
                per_token = layer.kv_heads * (layer.head_dim + v_dim) * kv_bytes
                kind = layer.attention
            size = tokens * per_token
        by_kind[kind] = by_kind.get(kind, 0) + int(size)
        total += size
    parts = []
    if "full" in by_kind:
        parts.append("full layers: context x 2 x kv_heads x head_dim x bytes")
    if "sliding" in by_kind:
        parts.append("sliding layers: " + ("full context (engine pages them fully)"
                                           if engine in _FULL_PAGES_FOR_SLIDING
                                           else "min(context, window)") + " x 2 x kv_heads x "
                     "head_dim x bytes")
    if "mla-latent" in by_kind:
        parts.append("MLA: context x (kv_lora_rank + qk_rope_head_dim) x bytes")
    if "mla-decompressed" in by_kind:
        parts.append("MLA decompressed by transformers: context x heads x (qk dims + v dim) x "
                     "bytes")
    if "linear-state" in by_kind:
        parts.append("linear/SSM layers: a constant state per sequence (conv + recurrent "
                     f"state x {state_element_bytes(engine)} bytes), whatever the context")
    return KVCache(int(total), ctx, "; ".join(parts), by_kind)


def kv_tp_divisor(model: ModelSpec, tp: int) -> float:
    """How much tensor parallelism divides the KV cache on each GPU.

    KV heads split across GPUs; with fewer KV heads than GPUs they are replicated, and an
    MLA latent is replicated on every GPU (vLLM).
    """
    if tp <= 1:
        return 1.0
    if model.mla is not None:
        return 1.0
    heads = model.num_kv_heads or model.num_attention_heads or tp
    return float(min(tp, heads))
