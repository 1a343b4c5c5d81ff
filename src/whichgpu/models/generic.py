"""Generic decoders for a bare size: an approximation when the real model is not known.

``70B`` (or ``--params 70e9``) is a dense decoder shaped like the Llama 2/3 family at the
nearest size (hidden width from the table below, grouped-query attention with 8 KV heads of 128
dims, SwiGLU MLP of about 3.5 x hidden, a 128k vocabulary); the layer count is the largest that
fits the size given, and the remainder (less than one layer) is put in ``params.other`` so that
the total is exactly the size given.

``106B-A12B`` (total and active) is a MoE decoder shaped like the 2025-26 MoE releases; see
:func:`generic_moe_spec` for where each ratio comes from.
Every spec built here has ``approximate=True`` and says so in its notes.
"""

from __future__ import annotations

import math
import re

from whichgpu.errors import InputError
from whichgpu.messages import msg
from whichgpu.models.spec import LayerSpec, LinearGroup, ModelSpec, MoESpec, ParamCounts
from whichgpu.units import format_count

# (parameters, hidden size) of real dense decoders, used to pick the width for a size:
# Llama 3.2 1B/3B, Llama 3 8B, Llama 2 13B, Code Llama 34B, Llama 3 70B, Llama 3.1 405B.
_WIDTHS = ((1.2e9, 2048), (3.2e9, 3072), (8.0e9, 4096), (13e9, 5120), (34e9, 8192),
           (70e9, 8192), (405e9, 16384))
_VOCAB = 128256
_KV_HEADS = 8
_HEAD_DIM = 128
_MIN, _MAX = 100e6, 10e12  # GPT-2 small (124M) to ten times the largest public models
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*$", re.IGNORECASE)
_MOE_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*-\s*a\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*$",
                       re.IGNORECASE)
_UNITS = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_bare_size(text: str) -> float | None:
    """``"70B" -> 7e10``, ``"8b" -> 8e9``, ``"350M" -> 3.5e8``; None if it is not a size."""
    m = _SIZE.match(text)
    if not m:
        return None
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def parse_moe_size(text: str) -> tuple[float, float] | None:
    """``"106B-A12B" -> (1.06e11, 1.2e10)``: total and active parameters; None if it is not
    such a size. An active count above the total is an InputError."""
    m = _MOE_SIZE.match(text)
    if not m:
        return None
    total = float(m.group(1)) * _UNITS[m.group(2).lower()]
    active = float(m.group(3)) * _UNITS[m.group(4).lower()]
    if active >= total:
        raise InputError(msg("params.moe_active", "{v}: the active size (after A) must be below "
                             "the total, as in 106B-A12B", v=text.strip()))
    return total, active


def bare_size_spec(text: str) -> ModelSpec | None:
    """The generic spec a bare size names (``70B`` dense, ``106B-A12B`` MoE), or None."""
    moe = parse_moe_size(text)
    if moe is not None:
        return generic_moe_spec(*moe, label=text.strip().upper().replace(" ", ""))
    size = parse_bare_size(text)
    if size is not None:
        return generic_spec(size, label=text.strip().upper())
    return None


def generic_spec(params: float, *, label: str | None = None) -> ModelSpec:
    """A dense decoder of ``params`` parameters, shaped like the Llama family."""
    if not isinstance(params, int | float) or not math.isfinite(params):
        raise InputError(msg("params.number", "parameter count must be a number, got {v}",
                             v=repr(params)))
    if not _MIN <= params <= _MAX:
        raise InputError(msg("params.range", "parameter count {v:g} is outside {low:g}..{high:g}; "
                             "write it like 70B or 70e9", v=params, low=_MIN, high=_MAX))
    n_target = int(round(params))
    h = min(_WIDTHS, key=lambda w: abs(math.log(w[0] / params)))[1]
    if params < 0.6e9:  # below the table: narrow models (Qwen2.5-0.5B is 896 wide)
        h = 1024
    a = h // _HEAD_DIM
    k = min(_KV_HEADS, a)
    inter = int(round(3.5 * h / 256)) * 256
    vocab = _VOCAB if params >= 0.6e9 else 32000
    per_layer = (h * a * _HEAD_DIM * 2 + 2 * h * k * _HEAD_DIM + 3 * h * inter + 2 * h)
    fixed = 2 * vocab * h + h
    layers = max(1, (n_target - fixed) // per_layer)  # the remainder goes to 'other' (>= 0)
    attention = layers * (h * a * _HEAD_DIM * 2 + 2 * h * k * _HEAD_DIM)
    mlp = layers * 3 * h * inter
    norms = layers * 2 * h + h
    shaped = 2 * vocab * h + attention + mlp + norms
    counts = ParamCounts(embedding=vocab * h, attention=attention, mlp=mlp,
                         lm_head=vocab * h, norms=norms, other=n_target - shaped,
                         active=n_target)
    text = label or format_count(n_target)
    linears = (
        LinearGroup("q_proj", h, a * _HEAD_DIM, layers),
        LinearGroup("k_proj", h, k * _HEAD_DIM, layers),
        LinearGroup("v_proj", h, k * _HEAD_DIM, layers),
        LinearGroup("o_proj", a * _HEAD_DIM, h, layers),
        LinearGroup("gate_proj", h, inter, layers),
        LinearGroup("up_proj", h, inter, layers),
        LinearGroup("down_proj", inter, h, layers),
    )
    note = (f"approximation: a generic dense decoder of {format_count(n_target)} parameters "
            f"shaped like Llama ({layers} layers, hidden {h}, {k} KV heads of {_HEAD_DIM}); "
            "name the real model for exact memory and speed")
    return ModelSpec(
        id=f"size:{text}", name=f"generic {format_count(n_target)} dense decoder",
        family="decoder", architecture="generic", source=f"size:{text}", params=counts,
        num_layers=layers, hidden_size=h, num_attention_heads=a, num_kv_heads=k,
        head_dim=_HEAD_DIM, intermediate_size=inter, vocab_size=vocab,
        tie_word_embeddings=False, max_context=131072, gated_mlp=True,
        layers=tuple(LayerSpec(kv_heads=k, head_dim=_HEAD_DIM, v_head_dim=_HEAD_DIM)
                     for _ in range(layers)),
        linears=linears, native_dtype="bf16", approximate=True, notes=(note,))


# Reference MoE decoders for the generic MoE shape: (active parameters, hidden size) of
# Qwen3-30B-A3B (2048), GLM-4.5-Air 106B-A12B (4096), Qwen3-235B-A22B (4096), GLM-4.5
# 355B-A32B (5120), DeepSeek-V3 671B-A37B (7168); their shipped configs are in presets/.
_MOE_WIDTHS = ((3.3e9, 2048), (12e9, 4096), (22e9, 4096), (32e9, 5120), (37e9, 7168))
_MOE_VOCAB = 151552  # GLM-4.5's vocabulary (Qwen3's is 151,936)
_MOE_TOP_K = 8  # routed experts per token: Qwen3 MoE, GLM-4.5, DeepSeek-V3, Kimi K2
_MOE_WIDTH_RATIO = 0.375  # expert width / hidden: Qwen3-30B-A3B 768/2048, Qwen3-235B 1536/4096


def generic_moe_spec(total: float, active: float, *, label: str | None = None) -> ModelSpec:
    """A MoE decoder of ``total`` parameters with ``active`` used per token.

    The shape follows the MoE releases of 2025-26 (presets qwen3-30b-a3b, glm-4.5-air,
    qwen3-235b-a22b, glm-4.5, deepseek-v3): the hidden width of the reference model nearest in
    active size; grouped-query attention with 8 KV heads of 128 (GLM-4.5-Air, MiniMax-M2;
    Qwen3's MoEs use 4, so the KV cache here errs large); 8 routed experts per token plus one
    shared expert (GLM-4.5, DeepSeek-V3) of 0.375 x hidden; every layer MoE. The active size
    fixes the layer count, then the total fixes the number of experts. What whole layers and
    experts leave over is added as a dense MLP term (the active part) and to the experts' pool
    (the rest), so total and active are exactly those given.
    """
    for value in (total, active):
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(msg("params.number", "parameter count must be a number, got {v}",
                                 v=repr(value)))
    if not (_MIN <= active < total <= _MAX):
        raise InputError(msg("params.moe_range", "MoE size {total:g} total / {active:g} active "
                             "is outside {low:g}..{high:g} or has active >= total; write it like "
                             "106B-A12B", total=total, active=active, low=_MIN, high=_MAX))
    n_total, n_active = int(round(total)), int(round(active))
    h = min(_MOE_WIDTHS, key=lambda w: abs(math.log(w[0] / active)))[1]
    a, k, d = h // _HEAD_DIM, _KV_HEADS, _HEAD_DIM
    mi = max(128, int(round(_MOE_WIDTH_RATIO * h / 128)) * 128)
    attn = 2 * h * a * d + 2 * h * k * d
    expert = 3 * h * mi
    emb = 2 * _MOE_VOCAB * h
    per_active = attn + (_MOE_TOP_K + 1) * expert + 2 * h
    layers = max(1, (n_active - emb) // per_active)
    room = (n_total - emb) / layers - attn - 2 * h - expert  # routed experts + router
    e = max(2 * _MOE_TOP_K, int(room // (expert + h)))
    counts = dict(embedding=_MOE_VOCAB * h, lm_head=_MOE_VOCAB * h, attention=layers * attn,
                  mlp=0, experts=layers * e * expert, shared_experts=layers * expert,
                  router=layers * e * h, norms=layers * 2 * h + h)
    shaped = sum(counts.values())
    if shaped > n_total:
        raise InputError(msg("params.moe_small", "{v}: too few total parameters for a MoE of "
                             "{active} active; give a larger total", v=str(label or total),
                             active=format_count(n_active)))
    # what whole layers and experts leave over: the active part as a dense MLP term (every
    # token uses it), the rest into the routed experts' pool, so that both counts are exact
    active_shaped = shaped - counts["experts"] + layers * _MOE_TOP_K * expert
    extra_active = max(0, min(n_active - active_shaped, n_total - shaped))
    counts["mlp"] = extra_active
    counts["experts"] += n_total - shaped - extra_active
    params = ParamCounts(**counts, active=n_active)
    text = label or f"{format_count(n_total)}-A{format_count(n_active)}"
    linears = (
        LinearGroup("q_proj", h, a * d, layers), LinearGroup("k_proj", h, k * d, layers),
        LinearGroup("v_proj", h, k * d, layers), LinearGroup("o_proj", a * d, h, layers),
        LinearGroup("gate_proj", h, mi, layers * e, expert=True),
        LinearGroup("up_proj", h, mi, layers * e, expert=True),
        LinearGroup("down_proj", mi, h, layers * e, expert=True),
        LinearGroup("gate_proj", h, mi, layers), LinearGroup("up_proj", h, mi, layers),
        LinearGroup("down_proj", mi, h, layers),
    )
    moe = MoESpec(num_experts=e, experts_per_token=_MOE_TOP_K, num_shared_experts=1,
                  expert_intermediate_size=mi, shared_expert_intermediate_size=mi,
                  moe_layers=layers, dense_layers=0)
    note = (f"approximation: a generic MoE decoder of {format_count(n_total)} parameters, "
            f"{format_count(n_active)} active ({layers} layers, hidden {h}, {k} KV heads of "
            f"{d}, {e} experts of {mi} with {_MOE_TOP_K} routed + 1 shared per token, shaped "
            "like GLM-4.5 / Qwen3 MoE / DeepSeek-V3); name the real model for exact memory "
            "and speed")
    return ModelSpec(
        id=f"size:{text}", name=f"generic {text} MoE decoder", family="decoder",
        architecture="generic-moe", source=f"size:{text}", params=params, num_layers=layers,
        hidden_size=h, num_attention_heads=a, num_kv_heads=k, head_dim=d,
        intermediate_size=mi, vocab_size=_MOE_VOCAB, tie_word_embeddings=False,
        max_context=131072, gated_mlp=True,
        layers=tuple(LayerSpec(kv_heads=k, head_dim=d, v_head_dim=d, moe=True)
                     for _ in range(layers)),
        linears=linears, moe=moe, native_dtype="bf16", approximate=True, notes=(note,))
