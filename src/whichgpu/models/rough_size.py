"""A rough size read from a config.json whose architecture is not modelled, for the refusal
message to suggest a bare size (``70B`` dense, ``230B-A10B`` MoE) with the model's own numbers.

Per layer: attention 2 x hidden x (heads x head_dim) + 2 x hidden x (KV heads x head_dim),
a SwiGLU MLP 3 x hidden x width (dense), or for a MoE the routed experts (all of them in the
total, top-k in the active count) and shared experts; plus embedding and LM head, and Gemma 3n's
per-layer input embeddings (``vocab_size_per_layer_input`` x layers x
``hidden_size_per_layer_input``). It ignores biases, norms and exotic blocks, and the towers a
wrapper names (``vision_config``, ``audio_config``), which the hint then says it leaves out, so it
is a hint, never an estimate shown as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whichgpu.units import format_count

_FIELDS = {
    "hidden": ("hidden_size", "d_model", "n_embd", "dim"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "heads": ("num_attention_heads", "n_head", "n_heads"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num"),
    "head_dim": ("head_dim", "kv_channels"),
    "vocab": ("vocab_size", "padded_vocab_size"),
    "inter": ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"),
    "experts": ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts",
                "n_experts"),
    "top_k": ("num_experts_per_tok", "moe_k", "moe_topk", "top_k", "experts_per_token"),
    "expert_inter": ("moe_intermediate_size", "expert_intermediate_size"),
    "shared": ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts"),
}


def _first(cfg: Mapping, names: tuple[str, ...]) -> int | None:
    for n in names:
        v = cfg.get(n)
        if isinstance(v, list) and v and all(isinstance(x, int) for x in v):
            v = v[0]
        if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
            return int(v)
    return None


def rough_size(data: Any) -> tuple[float, float | None] | None:
    """(total, active or None for a dense model), or None when the dimensions are not there."""
    if not isinstance(data, Mapping):
        return None
    cfg = data
    for key in ("text_config", "language_config", "llm_config"):
        if isinstance(data.get(key), Mapping):
            cfg = {**data, **data[key]}
    f = {k: _first(cfg, names) for k, names in _FIELDS.items()}
    h, n = f["hidden"], f["layers"]
    if not h or not n:
        return None
    heads = f["heads"] or max(1, h // 128)
    d = f["head_dim"] or h // heads
    kv = f["kv_heads"] or heads
    attn = 2 * h * heads * d + 2 * h * kv * d
    emb = 2 * (f["vocab"] or 32000) * h
    per_layer = _first(cfg, ("hidden_size_per_layer_input",))
    if per_layer:  # Gemma 3n: one small embedding table per layer, read once per token
        emb += n * per_layer * (_first(cfg, ("vocab_size_per_layer_input",)) or f["vocab"]
                                or 32000)
    e, k = f["experts"], f["top_k"]
    if e and k and e > k:
        ew = f["expert_inter"] or f["inter"] or 4 * h
        shared = (f["shared"] or 0) * 3 * h * ew
        total = emb + n * (attn + e * 3 * h * ew + shared)
        active = emb + n * (attn + k * 3 * h * ew + shared)
        return float(total), float(active)
    inter = f["inter"] or 4 * h
    return float(emb + n * (attn + 3 * h * inter)), None


def _label(n: float) -> str:
    return format_count(n, digits=0 if n >= 1e10 else 1)


_TOWERS = ("vision_config", "audio_config", "vision_tower", "speech_config")


def rough_size_hint(data: Any) -> str:
    """One sentence for the refusal message: a bare size to use instead."""
    size = rough_size(data)
    if size is None:
        return ("Use a bare size such as '7B' (dense) or '106B-A12B' (MoE: total and active) "
                "for a rough estimate instead.")
    total, active = size
    towers = [k.removesuffix("_config") for k in _TOWERS
              if isinstance(data, Mapping) and isinstance(data.get(k), Mapping)]
    if active is None and towers:
        return (f"Its text model reads as roughly {_label(total)} parameters, without its "
                f"{' and '.join(towers)} tower{'s' if len(towers) > 1 else ''}, which the "
                f"model's weights add: a bare size above '{_label(total)}' gives a rough "
                "estimate instead.")
    if active is None:
        return (f"Its dimensions read as roughly {_label(total)} parameters: use the bare size "
                f"'{_label(total)}' for a rough estimate instead.")
    return (f"Its dimensions read as roughly {_label(total)} parameters, {_label(active)} active "
            f"per token: use the bare MoE size '{_label(total)}-A{_label(active)}' for a rough "
            "estimate instead (a generic MoE, not a dense model, so KV cache and speed follow a "
            "MoE).")
