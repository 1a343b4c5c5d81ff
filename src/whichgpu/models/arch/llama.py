"""Llama-like decoders (one ``Style`` per model_type): Llama, Mistral, Mixtral, Qwen 2/3 (dense
and MoE), Gemma 1-3, Phi-3 and gpt-oss.

Shapes follow transformers' modeling files: grouped-query attention, an explicit ``head_dim``
that need not be hidden/heads, tied embeddings, per-layer sliding windows, MoE layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from whichgpu.models.arch.build import (
    Arch,
    Build,
    attention_kinds,
    check_top_k,
    decoder_dims,
    embed_and_head,
    head_dim_of,
)
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec, MoESpec


@dataclass(frozen=True)
class Style:
    """How one llama-like architecture differs from Llama."""

    qkv_bias: bool | None = None  # None: read ``attention_bias``
    o_bias: bool | None = None
    qk_norm: bool = False  # RMSNorm(head_dim) on q and k (Qwen3, Gemma 3)
    layer_norms: int = 2  # norms per decoder layer (Gemma 2/3: 4)
    fused: bool = False  # Phi-3: qkv_proj and gate_up_proj
    head_dim: int | None = None  # default when the config has none (else hidden/heads)
    vocab: int | None = None  # default vocabulary
    tie: bool = False  # default of tie_word_embeddings
    ctx: int = 2048  # default max_position_embeddings
    sliding: str = "none"  # none | all | qwen | alternate | pattern
    window: int | None = None  # default sliding_window
    moe: str | None = None  # mixtral | qwen2_moe | qwen3_moe | gpt_oss


STYLES: dict[str, Style] = {
    "llama": Style(),
    "mistral": Style(sliding="all", window=4096, ctx=4096 * 32),
    "mixtral": Style(sliding="all", ctx=4096 * 32, moe="mixtral"),
    "qwen2": Style(qkv_bias=True, o_bias=False, sliding="qwen", ctx=32768, vocab=151936),
    "qwen2_moe": Style(qkv_bias=True, o_bias=False, sliding="qwen", ctx=32768, vocab=151936,
                       moe="qwen2_moe"),
    "qwen3": Style(qk_norm=True, head_dim=128, sliding="qwen", ctx=32768, vocab=151936),
    "qwen3_moe": Style(qk_norm=True, head_dim=128, sliding="qwen", ctx=32768, vocab=151936,
                       moe="qwen3_moe"),
    "gemma": Style(head_dim=256, vocab=256000, tie=True, ctx=8192),
    "gemma2": Style(head_dim=256, vocab=256000, tie=True, ctx=8192, layer_norms=4,
                    sliding="alternate", window=4096),
    "gemma3_text": Style(qk_norm=True, head_dim=256, vocab=262208, tie=True, ctx=131072,
                         layer_norms=4, sliding="pattern", window=4096),
    "phi3": Style(fused=True, ctx=4096, vocab=32064, sliding="all"),
    "gpt_oss": Style(qkv_bias=True, o_bias=True, head_dim=64, ctx=131072, sliding="alternate",
                     window=128, moe="gpt_oss"),
}


def llama_like(r: ConfigReader, mt: str) -> Arch:
    st = STYLES[mt]
    h, n, a, k = decoder_dims(r)
    d = head_dim_of(r, h, a, st.head_dim or 0)
    inter = r.int("intermediate_size", limit="intermediate")
    vocab = r.int("vocab_size", limit="vocab", **({"default": st.vocab} if st.vocab else {}))
    tied = r.bool("tie_word_embeddings", default=st.tie)
    ctx = r.int("max_position_embeddings", default=st.ctx, limit="context")
    attn_bias = r.bool("attention_bias", default=False)
    qkv_bias = attn_bias if st.qkv_bias is None else st.qkv_bias
    o_bias = attn_bias if st.o_bias is None else st.o_bias
    mlp_bias = r.bool("mlp_bias", default=False)
    qk_norm = st.qk_norm

    b = Build()
    embed_and_head(b, vocab, h, tied)
    notes: list[str] = []

    # attention
    if st.fused:
        b.linear("qkv_proj", h, (a + 2 * k) * d, n, "attention", bias=qkv_bias)
    else:
        b.linear("q_proj", h, a * d, n, "attention", bias=qkv_bias)
        b.linear("k_proj", h, k * d, n, "attention", bias=qkv_bias)
        b.linear("v_proj", h, k * d, n, "attention", bias=qkv_bias)
    b.linear("o_proj", a * d, h, n, "attention", bias=o_bias)
    if mt == "gpt_oss":
        b.add("attention", a * n)  # attention sinks: one learned logit per head
    b.add("norms", st.layer_norms * h * n + h + (2 * d * n if qk_norm else 0))

    # which layers are MoE
    moe_spec = None
    moe_layers = [False] * n
    if st.moe:
        moe_layers, moe_spec = _moe_layout(r, st.moe, n, inter)
    dense = moe_layers.count(False)
    if st.fused:
        b.linear("gate_up_proj", h, 2 * inter, dense, "mlp", bias=mlp_bias)
        b.linear("down_proj", inter, h, dense, "mlp", bias=mlp_bias)
    else:
        b.swiglu(h, inter, dense, "mlp", bias=mlp_bias)
    if st.moe and moe_spec:
        _moe_linears(b, st.moe, h, moe_spec)

    # attention kind per layer
    window = r.opt_int("sliding_window", limit="context")
    if "sliding_window" not in r.data:
        window = st.window
    if window is not None and window >= ctx and r.str_list("layer_types") is None:
        window = None  # a window as long as the context is full attention
    rule = _sliding_rule(r, st.sliding, n)
    kinds = attention_kinds(r, n, rule, window)
    layers = [LayerSpec(attention=kind, window=w, kv_heads=k, head_dim=d, v_head_dim=d,
                        moe=moe_layers[i])
              for i, (kind, w) in enumerate(kinds)]
    n_sliding = sum(1 for kd, _ in kinds if kd == "sliding")
    if n_sliding:
        notes.append(f"{n_sliding} of {n} layers use a sliding window of {window} tokens")
    if d * a != h:
        notes.append(f"head_dim {d} is not hidden_size/heads ({h}/{a})")
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                moe=moe_spec, notes=notes, architecture=mt)


def _sliding_rule(r: ConfigReader, style: str, n: int) -> Callable[[int], bool]:
    """Which layer indices use the sliding window, per architecture."""
    if style == "qwen":
        use = r.bool("use_sliding_window", default=False)
        first = r.int("max_window_layers", default=n, lo=0, limit="layers")
        return lambda i: use and i >= first
    if style == "alternate":  # Gemma 2, gpt-oss: even layers are local
        return lambda i: i % 2 == 0
    if style == "pattern":  # Gemma 3: every p-th layer is global
        p = r.int("sliding_window_pattern", default=6, limit="layers")
        return lambda i: (i + 1) % p != 0
    if style == "all":
        return lambda i: True
    return lambda i: False


def _moe_layout(r: ConfigReader, kind: str, n: int, inter: int) -> tuple[list[bool], MoESpec]:
    if kind in ("mixtral", "gpt_oss"):
        e = r.int("num_local_experts", "num_experts", default=8 if kind == "mixtral" else 32,
                  limit="experts")
        top = r.int("num_experts_per_tok", "experts_per_token", default=2 if kind == "mixtral"
                    else 4, limit="experts")
        layers = [True] * n
        spec = MoESpec(num_experts=e, experts_per_token=top, expert_intermediate_size=inter,
                       moe_layers=n, dense_layers=0)
    else:  # qwen2_moe, qwen3_moe
        e = r.int("num_experts", default=60 if kind == "qwen2_moe" else 128, limit="experts")
        top = r.int("num_experts_per_tok", default=4 if kind == "qwen2_moe" else 8,
                    limit="experts")
        mi = r.int("moe_intermediate_size", default=1408 if kind == "qwen2_moe" else 768,
                   limit="intermediate")
        step = r.int("decoder_sparse_step", default=1, limit="layers")
        only_dense = set(r.int_list("mlp_only_layers"))
        layers = [i not in only_dense and (i + 1) % step == 0 for i in range(n)]
        shared = 0
        shared_i = 0
        if kind == "qwen2_moe":
            shared_i = r.int("shared_expert_intermediate_size", default=5632, lo=0,
                             limit="intermediate")
            shared = 1 if shared_i else 0
        spec = MoESpec(num_experts=e, experts_per_token=top, num_shared_experts=shared,
                       expert_intermediate_size=mi, shared_expert_intermediate_size=shared_i,
                       moe_layers=sum(layers), dense_layers=n - sum(layers))
    check_top_k(r, top, e, "num_experts_per_tok")
    return layers, spec


def qwen2_moe_layout(r: ConfigReader, n: int, inter: int) -> tuple[list[bool], MoESpec]:
    """The Qwen2-MoE layout (routed experts, one gated shared expert) Qwen3-Next and Qwen3.5
    MoE reuse."""
    return _moe_layout(r, "qwen2_moe", n, inter)


def _moe_linears(b: Build, kind: str, h: int, m: MoESpec) -> None:
    ml, e, mi = m.moe_layers, m.num_experts, m.expert_intermediate_size
    if kind == "mixtral":
        b.linear("gate", h, e, ml, "router", lora=False)
        b.linear("w1", h, mi, ml * e, "experts", expert=True)
        b.linear("w3", h, mi, ml * e, "experts", expert=True)
        b.linear("w2", mi, h, ml * e, "experts", expert=True)
    elif kind == "gpt_oss":
        b.linear("router", h, e, ml, "router", bias=True, lora=False)
        b.linear("gate_up_proj", h, 2 * mi, ml * e, "experts", bias=True, expert=True)
        b.linear("down_proj", mi, h, ml * e, "experts", bias=True, expert=True)
    else:
        b.linear("gate", h, e, ml, "router", lora=False)
        b.swiglu(h, mi, ml * e, "experts", expert=True)
        if m.num_shared_experts:
            b.swiglu(h, m.shared_expert_intermediate_size, ml, "shared_experts")
            b.linear("shared_expert_gate", h, 1, ml, "shared_experts", lora=False)


def qwen2_moe_linears(b: Build, h: int, m: MoESpec) -> None:
    _moe_linears(b, "qwen2_moe", h, m)
