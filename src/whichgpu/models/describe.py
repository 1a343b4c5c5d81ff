"""ModelSpec → JSON-ready dict and short human summaries (used by the CLI and the web API)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from whichgpu.models.spec import ModelSpec


def attention_summary(spec: ModelSpec) -> dict[str, Any]:
    """Layers per attention kind, the sliding windows (and chunk sizes) in use, no-RoPE layers
    and the constant state per sequence of the linear/SSM layers."""
    kinds = Counter(layer.attention for layer in spec.layers)
    windows = sorted({layer.window for layer in spec.layers
                      if layer.window and layer.attention == "sliding"})
    chunks = sorted({layer.window for layer in spec.layers
                     if layer.window and layer.attention == "chunked"})
    return {"full": kinds.get("full", 0), "sliding": kinds.get("sliding", 0),
            "chunked": kinds.get("chunked", 0), "linear": kinds.get("linear", 0),
            "none": kinds.get("none", 0), "sliding_windows": windows, "chunk_sizes": chunks,
            "no_rope_layers": sum(1 for la in spec.layers
                                  if not la.rope and la.attention in ("full", "sliding")),
            "state_bytes_per_sequence": sum(la.state_bytes for la in spec.layers)}


def spec_to_json(spec: ModelSpec) -> dict[str, Any]:
    """Every field a script needs; keys named in the models issue are stable."""
    p = spec.params
    data: dict[str, Any] = {
        "id": spec.id, "name": spec.name, "family": spec.family,
        "architecture": spec.architecture, "source": spec.source, "hub_id": spec.hub_id,
        "approximate": spec.approximate,
        "params_total": spec.params_total, "params_active": spec.params_active,
        "params": p.to_json(),
        "num_layers": spec.num_layers, "hidden_size": spec.hidden_size,
        "num_attention_heads": spec.num_attention_heads, "num_kv_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim, "intermediate_size": spec.intermediate_size,
        "vocab_size": spec.vocab_size, "tie_word_embeddings": spec.tie_word_embeddings,
        "max_context": spec.max_context, "gated_mlp": spec.gated_mlp,
        "native_dtype": spec.native_dtype, "quantization": spec.quantization,
        "attention": attention_summary(spec),
        "layers": [{"attention": la.attention, "window": la.window, "kv_heads": la.kv_heads,
                    "head_dim": la.head_dim, "v_head_dim": la.v_head_dim, "moe": la.moe,
                    "rope": la.rope, "state_elements": la.state_elements,
                    "state_fp32_elements": la.state_fp32_elements}
                   for la in spec.layers],
        "mtp_params": spec.mtp_params, "vision_params": spec.vision_params,
        "linears": [{"name": g.name, "in_features": g.in_features,
                     "out_features": g.out_features, "count": g.count, "expert": g.expert,
                     "bias": g.bias} for g in spec.linears],
        "moe": None, "mla": None, "checkpoint": None, "diffusion": None,
        "notes": list(spec.notes),
    }
    if spec.moe:
        m = spec.moe
        data["moe"] = {"num_experts": m.num_experts, "experts_per_token": m.experts_per_token,
                       "num_shared_experts": m.num_shared_experts,
                       "expert_intermediate_size": m.expert_intermediate_size,
                       "shared_expert_intermediate_size": m.shared_expert_intermediate_size,
                       "moe_layers": m.moe_layers, "dense_layers": m.dense_layers}
    if spec.mla:
        a = spec.mla
        data["mla"] = {"kv_lora_rank": a.kv_lora_rank, "q_lora_rank": a.q_lora_rank,
                       "qk_rope_head_dim": a.qk_rope_head_dim,
                       "qk_nope_head_dim": a.qk_nope_head_dim, "v_head_dim": a.v_head_dim,
                       "cache_elements_per_token": a.cache_elements_per_token,
                       "index_head_dim": a.index_head_dim, "index_n_heads": a.index_n_heads,
                       "index_topk": a.index_topk}
    if spec.checkpoint:
        c = spec.checkpoint
        data["checkpoint"] = {"total_bytes": c.total_bytes, "bytes_by_dtype": c.bytes_by_dtype,
                              "params_by_dtype": c.params_by_dtype,
                              "tensor_count": c.tensor_count,
                              "embedding_bytes": c.embedding_bytes,
                              "lm_head_bytes": c.lm_head_bytes, "quant_types": list(c.quant_types),
                              "source": c.source}
    if spec.diffusion:
        d = spec.diffusion
        w, h = d.default_resolution
        data["diffusion"] = {
            "pipeline": d.pipeline, "denoiser": d.denoiser, "is_video": d.is_video,
            "vae_scale_factor": d.vae_scale_factor,
            "temporal_compression": d.temporal_compression,
            "latent_channels": d.latent_channels, "patch_size": d.patch_size,
            "temporal_patch_size": d.temporal_patch_size, "text_tokens": d.text_tokens,
            "guidance_distilled": d.guidance_distilled, "default_steps": d.default_steps,
            "default_resolution": [w, h], "default_frames": d.default_frames,
            "image_tokens_at_default": d.image_tokens(w, h, d.default_frames),
            "components": [{"name": c.name, "kind": c.kind, "params": c.params,
                            "native_dtype": c.native_dtype, "num_layers": c.num_layers,
                            "hidden_size": c.hidden_size, "max_tokens": c.max_tokens,
                            "checkpoint_bytes": c.checkpoint_bytes} for c in d.components]}
    if spec.approximate:
        data["assumptions"] = [n for n in spec.notes if n.startswith("approximation")]
    return data
