"""A generic dense decoder for a bare size ("70B", ``--params 70e9``): an approximation.

The shape follows the Llama 2/3 family at the nearest size (hidden width from the table
below, grouped-query attention with 8 KV heads of 128 dims, SwiGLU MLP of about 3.5 x hidden,
a 128k vocabulary); the layer count is the largest that fits the size given, and the
remainder (less than one layer) is put in ``params.other`` so that the total is exactly the
size given.
Every spec built here has ``approximate=True`` and says so in its notes.
"""

from __future__ import annotations

import math
import re

from whichgpu.errors import InputError
from whichgpu.models.spec import LayerSpec, LinearGroup, ModelSpec, ParamCounts
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


def parse_bare_size(text: str) -> float | None:
    """``"70B" -> 7e10``, ``"8b" -> 8e9``, ``"350M" -> 3.5e8``; None if it is not a size."""
    m = _SIZE.match(text)
    if not m:
        return None
    return float(m.group(1)) * {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[m.group(2).lower()]


def generic_spec(params: float, *, label: str | None = None) -> ModelSpec:
    """A dense decoder of ``params`` parameters, shaped like the Llama family."""
    if not isinstance(params, int | float) or not math.isfinite(params):
        raise InputError(f"parameter count must be a number, got {params!r}")
    if not _MIN <= params <= _MAX:
        raise InputError(f"parameter count {params:g} is outside {_MIN:g}..{_MAX:g}; "
                         "write it like 70B or 70e9")
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
