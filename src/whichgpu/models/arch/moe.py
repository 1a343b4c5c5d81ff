"""MoE decoders of 2025-26 with grouped-query attention: GLM-4.5/4.6/4.7 (``glm4_moe``),
MiniMax-M2 (``minimax_m2``), ERNIE 4.5 MoE (``ernie4_5_moe``), Hunyuan-A13B (``hunyuan_v1_moe``)
and Llama 4 (``llama4_text``, with chunked and no-RoPE layers).

Each is counted as its transformers (or the publisher's remote-code) modeling file builds it:
attention projections with their biases and q/k norms, the layers that stay dense, the router
(and its score-correction bias where the model has one), routed experts and shared experts.
"""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.errors import DataError
from whichgpu.models.arch.build import (
    Arch,
    Build,
    check_top_k,
    decoder_dims,
    embed_and_head,
    gqa_attention,
    head_dim_of,
)
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec, MoESpec


@dataclass(frozen=True)
class _Plan:
    """Where a MoE decoder differs from the others."""

    qkv_bias: bool
    o_bias: bool
    qk_norm: str | None  # "head", "layer" or None
    num_experts: int
    top_k: int
    expert_inter: int
    shared_inter: int  # width of the shared expert(s) together; 0: none
    n_shared: int
    dense_inter: int
    moe_layers: list[bool]
    router_bias: bool  # e_score_correction_bias (sigmoid routing with aux-loss-free balance)
    expert_names: tuple[str, str, str] = ("gate_proj", "up_proj", "down_proj")


def _build(r: ConfigReader, mt: str, p: _Plan, *, default_ctx: int,
           default_tie: bool = False) -> tuple[Arch, Build]:
    h, n, a, k = decoder_dims(r)
    d = head_dim_of(r, h, a)
    vocab = r.int("vocab_size", limit="vocab")
    tied = r.bool("tie_word_embeddings", default=default_tie)
    ctx = r.int("max_position_embeddings", default=default_ctx, limit="context")
    check_top_k(r, p.top_k, p.num_experts, "num_experts_per_tok")
    b = Build()
    embed_and_head(b, vocab, h, tied)
    gqa_attention(b, h, a, k, d, n, qkv_bias=p.qkv_bias, o_bias=p.o_bias, qk_norm=p.qk_norm)
    b.add("norms", 2 * h * n + h)
    ml = sum(p.moe_layers)
    _moe_block(b, h, p, ml)
    b.swiglu(h, p.dense_inter, n - ml, "mlp")
    moe = MoESpec(num_experts=p.num_experts, experts_per_token=p.top_k,
                  num_shared_experts=p.n_shared, expert_intermediate_size=p.expert_inter,
                  shared_expert_intermediate_size=p.shared_inter, moe_layers=ml,
                  dense_layers=n - ml)
    layers = [LayerSpec(attention="full", kv_heads=k, head_dim=d, v_head_dim=d, moe=m)
              for m in p.moe_layers]
    arch = Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                intermediate=p.dense_inter or p.expert_inter, vocab=vocab, tied=tied,
                max_ctx=ctx, layers=layers, moe=moe, architecture=mt)
    return arch, b


def _moe_block(b: Build, h: int, p: _Plan, count: int) -> None:
    b.linear("gate", h, p.num_experts, count, "router", lora=False)
    if p.router_bias:
        b.add("router", p.num_experts * count)
    g, u, dn = p.expert_names
    b.linear(g, h, p.expert_inter, count * p.num_experts, "experts", expert=True)
    b.linear(u, h, p.expert_inter, count * p.num_experts, "experts", expert=True)
    b.linear(dn, p.expert_inter, h, count * p.num_experts, "experts", expert=True)
    b.swiglu(h, p.shared_inter, count if p.shared_inter else 0, "shared_experts")


def _one_moe_layer(arch: Arch, p: _Plan) -> int:
    """Parameters of one MoE decoder layer (what a multi-token-prediction module repeats)."""
    b = Build()
    gqa_attention(b, arch.hidden, arch.heads, arch.kv_heads, arch.head_dim, 1,
                  qkv_bias=p.qkv_bias, o_bias=p.o_bias, qk_norm=p.qk_norm)
    b.add("norms", 2 * arch.hidden)
    _moe_block(b, arch.hidden, p, 1)
    return sum(b.counts.values())


def glm4_moe(r: ConfigReader, mt: str) -> Arch:
    """GLM-4.5 / 4.6 / 4.7 and GLM-4.5-Air (Glm4MoeForCausalLM): q/k/v biases
    (``attention_bias``), optional q/k RMSNorms (``use_qk_norm``), the first
    ``first_k_dense_replace`` layers dense, then a sigmoid router with its correction bias, routed
    experts and ``n_shared_experts`` shared experts. The checkpoint's
    ``num_nextn_predict_layers`` MTP layers (layer 92 of GLM-4.5: a MoE layer with enorm, hnorm,
    eh_proj and shared_head.norm) are not counted: Z.ai's 355B / 106B leave them out, and
    transformers does not load them."""
    n = r.int("num_hidden_layers", limit="layers")
    e = r.int("n_routed_experts", limit="experts")
    mi = r.int("moe_intermediate_size", limit="intermediate")
    shared = r.int("n_shared_experts", default=1, lo=0, limit="experts")
    first = r.int("first_k_dense_replace", default=1, lo=0, limit="layers")
    p = _Plan(qkv_bias=r.bool("attention_bias", default=False), o_bias=False,
              qk_norm="head" if r.bool("use_qk_norm") else None, num_experts=e,
              top_k=r.int("num_experts_per_tok", limit="experts"), expert_inter=mi,
              shared_inter=mi * shared, n_shared=shared,
              dense_inter=r.int("intermediate_size", limit="intermediate"),
              moe_layers=[i >= first for i in range(n)], router_bias=True)
    arch, _ = _build(r, mt, p, default_ctx=131072)
    mtp = r.int("num_nextn_predict_layers", default=0, lo=0, limit="layers")
    if mtp:
        h = arch.hidden
        arch.mtp_params = mtp * (_one_moe_layer(arch, p) + 2 * h * h + 3 * h)
        arch.notes.append(f"the checkpoint also holds {mtp} multi-token-prediction layer(s) "
                          f"({arch.mtp_params / 1e9:.2f}B parameters): not counted, as in "
                          "Z.ai's figures; engines load them only for speculative decoding")
    arch.notes.append(f"{first} dense layer(s), then {e} routed experts ({p.top_k} per token) "
                      f"and {shared} shared expert(s) per layer")
    return arch


def minimax_m2(r: ConfigReader, mt: str) -> Arch:
    """MiniMax-M2 / M2.1 / M2.5 / M2.7 (MiniMaxM2ForCausalLM): full attention with q and k
    RMSNorms over all heads (``qk_norm_type`` per_layer), every layer MoE with w1/w3/w2 experts
    of ``intermediate_size``, a sigmoid router with its correction bias, no shared expert.
    The ``num_mtp_modules`` MTP modules are not in the released checkpoint."""
    n = r.int("num_hidden_layers", limit="layers")
    norm_type = r.str("qk_norm_type", default="per_layer")
    if r.bool("use_qk_norm", default=True) and norm_type not in ("per_layer", "per_head"):
        raise DataError(r.origin, f"unknown qk_norm_type {norm_type!r}",
                        field=r.prefix + "qk_norm_type")
    if r.int("shared_intermediate_size", default=0, lo=0, limit="intermediate"):
        raise DataError(r.origin, "a shared expert is not modelled for minimax_m2",
                        field=r.prefix + "shared_intermediate_size")
    p = _Plan(qkv_bias=False, o_bias=False,
              qk_norm=(None if not r.bool("use_qk_norm", default=True) else
                       "layer" if norm_type == "per_layer" else "head"),
              num_experts=r.int("num_local_experts", limit="experts"),
              top_k=r.int("num_experts_per_tok", limit="experts"),
              expert_inter=r.int("intermediate_size", limit="intermediate"), shared_inter=0,
              n_shared=0, dense_inter=0, moe_layers=[True] * n,
              router_bias=r.bool("use_routing_bias", default=True),
              expert_names=("w1", "w3", "w2"))
    arch, _ = _build(r, mt, p, default_ctx=196608)
    arch.notes.append(f"every layer MoE: {p.num_experts} experts, {p.top_k} per token")
    return arch


def ernie45_moe(r: ConfigReader, mt: str) -> Arch:
    """ERNIE 4.5 MoE (Ernie4_5_MoeForCausalLM): ``use_bias`` on every projection, dense layers
    before ``moe_layer_start_index`` (and outside the interval / after the end index), MoE
    layers with a router, its ``moe_statics`` correction bias, experts of
    ``moe_intermediate_size`` and ``moe_num_shared_experts`` shared experts of the same width."""
    n = r.int("num_hidden_layers", limit="layers")
    start = r.int("moe_layer_start_index", default=0, lo=0, limit="layers")
    end = r.raw("moe_layer_end_index")
    end = n - 1 if end in (None, -1) else r.int("moe_layer_end_index", lo=0, limit="layers")
    interval = r.int("moe_layer_interval", default=1, limit="layers")
    mi = r.int("moe_intermediate_size", limit="intermediate")
    shared = r.int("moe_num_shared_experts", default=0, lo=0, limit="experts")
    bias = r.bool("use_bias", default=False)
    if bias:
        raise DataError(r.origin, "use_bias true: biased MoE projections are not modelled for "
                        "ernie4_5_moe", field=r.prefix + "use_bias")
    p = _Plan(qkv_bias=False, o_bias=False, qk_norm=None,
              num_experts=r.int("moe_num_experts", limit="experts"),
              top_k=r.int("moe_k", limit="experts"), expert_inter=mi,
              shared_inter=mi * shared, n_shared=shared,
              dense_inter=r.int("intermediate_size", limit="intermediate"),
              moe_layers=[(i + 1) % interval == 0 and start <= i <= end for i in range(n)],
              router_bias=True)
    arch, _ = _build(r, mt, p, default_ctx=131072, default_tie=True)
    arch.notes.append(f"{n - sum(p.moe_layers)} dense layer(s); MoE layers have "
                      f"{p.num_experts} experts ({p.top_k} per token) and {shared} shared")
    mtp = r.int("num_nextn_predict_layers", default=0, lo=0, limit="layers")
    if mtp:
        arch.notes.append(f"the checkpoint may also hold {mtp} multi-token-prediction "
                          "layer(s), not counted")
    return arch


def hunyuan_moe(r: ConfigReader, mt: str) -> Arch:
    """Hunyuan MoE (HunYuanMoEV1ForCausalLM, Hunyuan-A13B): q/k RMSNorms per head
    (``use_qk_norm``), every layer MoE with a softmax router (gate.wg, no bias), experts of
    ``moe_intermediate_size`` and, with ``use_mixed_mlp_moe``, a shared MLP of
    ``intermediate_size`` x ``num_shared_expert``. Per-layer lists (``moe_topk``,
    ``moe_intermediate_size``, ``num_shared_expert``) must be uniform here; cross-layer
    attention (``use_cla``) is refused."""
    n = r.int("num_hidden_layers", limit="layers")
    if r.bool("use_cla"):
        raise DataError(r.origin, "cross-layer attention (use_cla) is not modelled",
                        field=r.prefix + "use_cla")

    def uniform(name: str, default: int) -> int:
        value = r.raw(name, default)
        values = value if isinstance(value, list) else [value]
        if not values or len(set(values)) != 1 or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
            raise DataError(r.origin, "expected one non-negative integer, or a list of the "
                            f"same one per layer, got {value!r:.60}", field=r.prefix + name)
        return values[0]

    dense = r.int("intermediate_size", limit="intermediate")
    mixed = r.bool("use_mixed_mlp_moe")
    shared = uniform("num_shared_expert", 1) if mixed else 0
    p = _Plan(qkv_bias=r.bool("attention_bias"), o_bias=r.bool("attention_bias"),
              qk_norm="head" if r.bool("use_qk_norm") else None,
              num_experts=uniform("num_experts", 1), top_k=uniform("moe_topk", 1),
              expert_inter=uniform("moe_intermediate_size", dense),
              shared_inter=dense * shared, n_shared=shared, dense_inter=0,
              moe_layers=[True] * n, router_bias=False)
    arch, _ = _build(r, mt, p, default_ctx=32768, default_tie=True)
    arch.notes.append(f"every layer MoE: {p.num_experts} experts ({p.top_k} per token)"
                      + (f" and a shared MLP of {p.shared_inter}" if shared else ""))
    return arch


def llama4_text(r: ConfigReader, mt: str) -> Arch:
    """Llama 4 text (Llama4TextModel): MoE layers every ``interleave_moe_layer_step`` (or as
    ``moe_layers`` lists) with a top-k router, experts of ``intermediate_size`` and a shared
    expert of the same width; the other layers a dense MLP of ``intermediate_size_mlp``.
    Attention is chunked (``attention_chunk_size`` tokens, with RoPE) except the no-RoPE layers
    (``no_rope_layers`` 0, by default every fourth), which attend to the whole context. The qk
    norm is an L2 norm without weights."""
    n = r.int("num_hidden_layers", limit="layers")
    step = r.int("interleave_moe_layer_step", default=1, limit="layers")
    listed = r.int_list("moe_layers")
    moe_idx = set(listed) if listed else set(range(step - 1, n, step))
    chunk = r.opt_int("attention_chunk_size", limit="context")
    rope = r.int_list("no_rope_layers")
    if rope and len(rope) != n:
        raise DataError(r.origin, f"has {len(rope)} entries, expected one per layer ({n})",
                        field=r.prefix + "no_rope_layers")
    if not rope:
        interval = r.int("no_rope_layer_interval", default=4, limit="layers")
        rope = [int((i + 1) % interval != 0) for i in range(n)]
    inter = r.int("intermediate_size", limit="intermediate")
    p = _Plan(qkv_bias=r.bool("attention_bias"), o_bias=r.bool("attention_bias"), qk_norm=None,
              num_experts=r.int("num_local_experts", limit="experts"),
              top_k=r.int("num_experts_per_tok", default=1, limit="experts"),
              expert_inter=inter, shared_inter=inter, n_shared=1,
              dense_inter=r.int("intermediate_size_mlp", limit="intermediate"),
              moe_layers=[i in moe_idx for i in range(n)], router_bias=False)
    arch, _ = _build(r, mt, p, default_ctx=131072)
    arch.layers = [LayerSpec(attention="chunked" if (use and chunk) else "full",
                             window=chunk if (use and chunk) else None, kv_heads=layer.kv_heads,
                             head_dim=layer.head_dim, v_head_dim=layer.v_head_dim,
                             moe=layer.moe, rope=bool(use))
                   for layer, use in zip(arch.layers, rope, strict=True)]
    chunked = sum(1 for layer in arch.layers if layer.attention == "chunked")
    arch.notes.append(f"{chunked} of {n} layers attend within chunks of {chunk:,} tokens "
                      f"(a bounded KV cache); {n - chunked} no-RoPE layers attend to the whole "
                      "context" if chunk else "no attention_chunk_size: every layer attends to "
                      "the whole context")
    arch.notes.append(f"{sum(p.moe_layers)} MoE layers ({p.num_experts} experts, {p.top_k} per "
                      f"token, one shared), {n - sum(p.moe_layers)} dense")
    return arch
