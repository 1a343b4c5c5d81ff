"""KV cache per sequence, layer type by layer type: GQA/MQA, MLA (with DeepSeek-V3.2's indexer
keys), sliding-window and chunked layers, and the constant state of linear-attention / SSM
layers. ``kv_cache`` is what an engine allocates; ``kv_read_bytes`` what one decode step reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from whichgpu.engines import engines_with, has
from whichgpu.estimate.constants import memory_value
from whichgpu.estimate.memo import by_identity
from whichgpu.messages import Join, msg
from whichgpu.models.spec import LayerSpec, ModelSpec

# Engines that give sliding-window layers full-length pages in hybrid models (hf-mem #60/#70:
# capping them under-counts gpt-oss-20b by 49 % on vLLM). Others keep only the window.
# Llama 4's chunked layers likewise: vLLM turned its hybrid cache for chunked local attention
# off by default for latency (vllm-project/vllm#21761, after #19351 added it) and SGLang's is
# opt-in (sgl-project/sglang#6563, hybrid_kvcache_ratio); transformers' hybrid chunked cache
# and llama.cpp's chunked SWA cache keep one chunk.
_FULL_PAGES_FOR_SLIDING = engines_with("pages_sliding_windows")
# Engines whose MLA cache holds the compressed latent; transformers stores decompressed K/V.
_LATENT_MLA = engines_with("caches_mla_latent")


@dataclass(frozen=True)
class KVCache:
    bytes_per_sequence: int
    context_cached: int  # context after the engine's block rounding
    formula: str
    by_kind: dict[str, int]


# DeepSeek-V3.2's indexer cache in vLLM and SGLang: FP8 keys with one float32 scale per block
# of 128 elements (vLLM DeepseekV32IndexerCache: index_head_dim + index_head_dim / 128 * 4 bytes).
_INDEX_QUANT_BLOCK = 128


def index_key_bytes(index_head_dim: int, engine: str) -> int:
    """Bytes per token and layer of DeepSeek-V3.2's indexer key cache."""
    if engine in _LATENT_MLA:
        return index_head_dim + 4 * math.ceil(index_head_dim / _INDEX_QUANT_BLOCK)
    return 2 * index_head_dim  # 16-bit keys where the engine does not quantize them


def state_element_bytes(engine: str) -> int:
    """Bytes per element of a linear-attention / SSM state: llama.cpp keeps recurrent states in
    F32 (estimators.md 5.2, gguf-parser's recurrent path); vLLM, SGLang and transformers keep
    them in the model's 16-bit dtype (vLLM mamba_cache_dtype 'auto'). A quantized KV-cache
    dtype does not apply to them."""
    return 4 if has(engine, "ggml_runtime") else 2


def cached_context(context: int, engine: str) -> int:
    """Context rounded up to the engine's allocation unit (vLLM blocks, llama.cpp padding)."""
    if has(engine, "continuous_batching"):
        block = int(memory_value("vllm_block_tokens"))
    elif has(engine, "ggml_runtime"):
        block = int(memory_value("llamacpp_ctx_pad_tokens"))
    else:
        return context
    return int(math.ceil(context / block) * block)


def _layers(model: ModelSpec) -> tuple[LayerSpec, ...]:
    if model.layers:
        return model.layers
    return tuple(LayerSpec("full", None, model.num_kv_heads, model.head_dim, model.head_dim)
                 for _ in range(model.num_layers))


@by_identity()
def kv_cache(model: ModelSpec, context: int, kv_bytes: float, engine: str) -> KVCache:
    """Bytes of KV cache (and recurrent state) one sequence of ``context`` tokens holds."""
    ctx = cached_context(context, engine)
    by_kind: dict[str, int] = {}
    total = 0.0
    mla = model.mla
    for layer in _layers(model):
        if layer.attention == "none":
            continue
        if layer.attention == "linear":
            size = float(_state_bytes(layer, engine))
            kind = "linear-state"
        else:
            tokens = ctx
            if layer.attention in ("sliding", "chunked") and layer.window and engine not in \
                    _FULL_PAGES_FOR_SLIDING:
                tokens = min(ctx, cached_context(layer.window, engine))
            per_token, kind = _per_token(model, layer, kv_bytes, engine)
            size = tokens * per_token
            if mla is not None and mla.index_head_dim:
                index = tokens * index_key_bytes(mla.index_head_dim, engine)
                by_kind["dsa-indexer"] = by_kind.get("dsa-indexer", 0) + int(index)
                total += index
        by_kind[kind] = by_kind.get(kind, 0) + int(size)
        total += size
    parts = []
    if "full" in by_kind:
        parts.append(msg("formula.kv.full", "full layers: context x 2 x kv_heads x head_dim x "
                         "bytes"))
    paged = engine in _FULL_PAGES_FOR_SLIDING
    if "sliding" in by_kind:
        parts.append(msg("formula.kv.sliding.paged", "sliding layers: full context (engine "
                         "pages them fully) x 2 x kv_heads x head_dim x bytes") if paged else
                     msg("formula.kv.sliding", "sliding layers: min(context, window) x 2 x "
                         "kv_heads x head_dim x bytes"))
    if "chunked" in by_kind:
        parts.append(msg("formula.kv.chunked.paged", "chunked layers: full context (engine "
                         "pages them fully) x 2 x kv_heads x head_dim x bytes") if paged else
                     msg("formula.kv.chunked", "chunked layers: min(context, window) x 2 x "
                         "kv_heads x head_dim x bytes"))
    if "mla-latent" in by_kind:
        parts.append(msg("formula.kv.mla", "MLA: context x (kv_lora_rank + qk_rope_head_dim) x "
                         "bytes"))
    if "mla-decompressed" in by_kind:
        parts.append(msg("formula.kv.mla_decompressed", "MLA decompressed by transformers: "
                         "context x heads x (qk dims + v dim) x bytes"))
    if "dsa-indexer" in by_kind and mla is not None:
        parts.append(msg("formula.kv.indexer", "DeepSeek sparse-attention indexer: context x "
                         "{bytes} bytes per layer",
                         bytes=index_key_bytes(mla.index_head_dim, engine)))
    if "linear-state" in by_kind:
        parts.append(msg("formula.kv.linear", "linear/SSM layers: a constant state per sequence "
                         "(conv + recurrent state x {bytes} bytes, float32 where the model asks "
                         "for it), whatever the context", bytes=state_element_bytes(engine)))
    return KVCache(int(total), ctx, msg("formula.kv", "{parts}", parts=Join(parts, "; ")),
                   by_kind)


def _state_bytes(layer: LayerSpec, engine: str) -> int:
    """A linear/SSM layer's state: the engine's state dtype, float32 for the part the config
    keeps in float32 (vLLM and SGLang follow mamba_ssm_dtype / mamba_ssm_cache_dtype)."""
    fp32 = min(layer.state_fp32_elements, layer.state_elements)
    return (layer.state_elements - fp32) * state_element_bytes(engine) + 4 * fp32


def _per_token(model: ModelSpec, layer: LayerSpec, kv_bytes: float,
               engine: str) -> tuple[float, str]:
    """Bytes one token adds to one attention layer's cache, and the kind it is reported as."""
    mla = model.mla
    if mla is not None and engine in _LATENT_MLA:
        return mla.cache_elements_per_token * kv_bytes, "mla-latent"
    if mla is not None:
        heads = model.num_attention_heads
        return heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) * \
            kv_bytes, "mla-decompressed"
    v_dim = layer.v_head_dim or layer.head_dim
    return layer.kv_heads * (layer.head_dim + v_dim) * kv_bytes, layer.attention


@by_identity()
def kv_read_bytes(model: ModelSpec, context: int, kv_bytes: float, engine: str) -> float:
    """Bytes of cache and state one decode step reads for one sequence at ``context`` tokens.

    What the engine holds (``kv_cache``: the speed constants were fitted on that read), except
    where the architecture reads less than it keeps: a chunked layer (Llama 4) reads at most
    its chunk whatever the engine pages, and DeepSeek-V3.2 reads every indexer key but the
    latent of only the ``index_topk`` tokens its indexer selects.
    """
    held = kv_cache(model, context, kv_bytes, engine)
    total = float(held.bytes_per_sequence)
    ctx = held.context_cached
    mla = model.mla
    for layer in _layers(model):
        if layer.attention == "chunked" and layer.window and engine in \
                _FULL_PAGES_FOR_SLIDING and ctx > layer.window:
            per_token, _ = _per_token(model, layer, kv_bytes, engine)
            total -= (ctx - layer.window) * per_token
        elif mla is not None and mla.index_topk and layer.attention == "full" and \
                ctx > mla.index_topk:
            per_token, _ = _per_token(model, layer, kv_bytes, engine)
            total -= (ctx - mla.index_topk) * per_token
    return total


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
