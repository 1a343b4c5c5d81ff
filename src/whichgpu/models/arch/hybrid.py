"""Hybrid decoders whose recurrent layers hold a constant state per sequence instead of a KV
cache: Qwen3-Next and Qwen3.5 (Gated DeltaNet + gated full attention), IBM Granite 4.0
(``granitemoehybrid``: Mamba-2 + attention, MoE or dense MLPs) and NVIDIA Nemotron-H
(``nemotron_h``: Mamba-2, attention, MLP and MoE blocks in a pattern).

State per sequence and recurrent layer, as vLLM allocates it (its mamba state shapes):
  Gated DeltaNet: conv channels (2 x key_dim + value_dim) x (kernel - 1)
                  + value heads x key_head_dim x value_head_dim
  Mamba-2:        (d_inner + 2 x groups x d_state) x (kernel - 1) + heads x head_dim x d_state
The recurrent part is kept in float32 where the config asks for it (Qwen3.5
``mamba_ssm_dtype``, Nemotron-H ``mamba_ssm_cache_dtype``).
"""

from __future__ import annotations

from whichgpu.errors import DataError
from whichgpu.models.arch.build import (
    Arch,
    Build,
    attention_kinds,
    check_top_k,
    decoder_dims,
    embed_and_head,
    gqa_attention,
    head_dim_of,
    mamba2_mixer,
    mamba2_shapes,
)
from whichgpu.models.arch.llama import qwen2_moe_layout, qwen2_moe_linears
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec, MoESpec


def _fp32_state(r: ConfigReader, key: str) -> bool:
    return str(r.raw(key, "")).lower() in ("float32", "fp32", "torch.float32")


# ---------------------------------------------------------------------------- Gated DeltaNet

def gated_deltanet(r: ConfigReader, mt: str) -> Arch:
    """Qwen3-Next (``qwen3_next``) and the Qwen3.5 text models (``qwen3_5_text``,
    ``qwen3_5_moe_text``): Gated DeltaNet layers and gated full-attention layers (3:1), a dense
    SwiGLU MLP (Qwen3.5 dense) or routed experts with a gated shared expert in every layer.

    Shapes follow transformers' modeling_qwen3_next.py / modeling_qwen3_5.py: full attention
    projects q and an output gate together (q_proj out = 2 x heads x head_dim) with q/k
    RMSNorms; a Gated DeltaNet layer projects hidden -> 2 key_dim + 2 value_dim + 2 value heads
    (qkvz and ba; Qwen3.5 splits them into in_proj_qkv, _z, _b, _a), runs a depthwise conv1d
    over q, k, v (no bias), keeps dt_bias and A_log per value head, a gated RMSNorm of
    value_head_dim, and out_proj (value_dim -> hidden).
    Multi-token prediction (``mtp_num_hidden_layers``; Qwen3-Next always has one): mtp.fc
    (2 x hidden -> hidden), two pre-fc norms, one full-attention layer, a final norm; it shares
    the embedding and LM head. Counted in ``mtp_params``, not in the total.
    """
    h, n, a, k = decoder_dims(r)
    d = head_dim_of(r, h, a, 256)
    moe = mt != "qwen3_5_text"
    inter = r.int("intermediate_size", default=512 if moe else 0, limit="intermediate")
    vocab = r.int("vocab_size", default=151936 if mt == "qwen3_next" else 248320,
                  limit="vocab")
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=262144, limit="context")
    bias = r.bool("attention_bias", default=False)
    gate = r.bool("attn_output_gate", default=True)
    kh = r.int("linear_num_key_heads", limit="heads")
    vh = r.int("linear_num_value_heads", limit="heads")
    dk = r.int("linear_key_head_dim", limit="hidden")
    dv = r.int("linear_value_head_dim", limit="hidden")
    kern = r.int("linear_conv_kernel_dim", default=4, limit="layers")
    interval = r.int("full_attention_interval", default=4, limit="layers")
    if vh % kh:
        raise DataError(r.origin, f"{vh} value heads cannot share {kh} key heads",
                        field=r.prefix + "linear_num_value_heads")
    key_dim, value_dim = kh * dk, vh * dv
    conv_dim = 2 * key_dim + value_dim

    if r.str_list("layer_types") is not None:
        kinds = attention_kinds(r, n, lambda i: False, None, linear_ok=True)
    else:  # every interval-th layer is full attention, the others Gated DeltaNet
        kinds = [("full" if (i + 1) % interval == 0 else "linear", None) for i in range(n)]
    full = sum(1 for kd, _ in kinds if kd == "full")
    lin = n - full

    b = Build()
    embed_and_head(b, vocab, h, tied)

    def layers_of(b: Build, full: int, lin: int) -> None:
        gqa_attention(b, h, a, k, d, full, qkv_bias=bias, o_bias=bias, qk_norm="head",
                      q_gate=gate)
        b.linear("in_proj_qkvz", h, 2 * key_dim + 2 * value_dim, lin, "attention")
        b.linear("in_proj_ba", h, 2 * vh, lin, "attention")
        b.linear("out_proj", value_dim, h, lin, "attention")
        b.add("other", (conv_dim * kern + 2 * vh) * lin)  # conv1d, dt_bias, A_log
        b.add("norms", 2 * h * (full + lin) + dv * lin)

    layers_of(b, full, lin)
    b.add("norms", h)
    moe_spec: MoESpec | None = None
    moe_layers = [False] * n
    if moe:
        moe_layers, moe_spec = qwen2_moe_layout(r, n, inter)
        qwen2_moe_linears(b, h, moe_spec)
    b.swiglu(h, inter, moe_layers.count(False), "mlp")

    fp32 = _fp32_state(r, "mamba_ssm_dtype")
    ssm = vh * dk * dv
    state = conv_dim * (kern - 1) + ssm
    layers = [LayerSpec(attention="full", kv_heads=k, head_dim=d, v_head_dim=d,
                        moe=moe_layers[i]) if kd == "full" else
              LayerSpec(attention="linear", moe=moe_layers[i], state_elements=state,
                        state_fp32_elements=ssm if fp32 else 0)
              for i, (kd, _) in enumerate(kinds)]

    mtp = r.int("mtp_num_hidden_layers", default=1 if mt == "qwen3_next" else 0, lo=0,
                limit="layers")
    mtp_params = 0
    if mtp:
        m = Build()
        layers_of(m, 1, 0)
        if moe_spec:
            one = MoESpec(moe_spec.num_experts, moe_spec.experts_per_token,
                          moe_spec.num_shared_experts, moe_spec.expert_intermediate_size,
                          moe_spec.shared_expert_intermediate_size, moe_layers=1)
            qwen2_moe_linears(m, h, one)
        else:
            m.swiglu(h, inter, 1, "mlp")
        mtp_params = mtp * (sum(m.counts.values()) + 2 * h * h + 3 * h)
    notes = [f"{lin} of {n} layers are Gated DeltaNet (linear attention): a constant state of "
             f"{state:,} elements per sequence each"
             + (" (the recurrent part in float32, as the config's mamba_ssm_dtype asks)"
                if fp32 else "") + f", no KV cache; {full} full-attention layers"]
    if mtp_params:
        notes.append(f"the checkpoint also holds {mtp} multi-token-prediction layer(s) "
                     f"({mtp_params / 1e6:,.0f}M parameters): not counted, engines load them "
                     "only for speculative decoding")
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                moe=moe_spec, notes=notes, architecture=mt, mtp_params=mtp_params)


# ---------------------------------------------------------------------------- Mamba-2 hybrids

def granite_hybrid(r: ConfigReader, mt: str) -> Arch:
    """IBM Granite 4.0 (GraniteMoeHybridForCausalLM): per layer two RMSNorms, a Mamba-2 mixer
    or an attention block (``layer_types``), then MoE experts (``num_local_experts`` > 0: a
    router, input_linear gate+up and output_linear per expert) and a shared SwiGLU MLP of
    ``shared_intermediate_size``. No position embeddings (NoPE); tied embeddings."""
    h, n, a, k = decoder_dims(r)
    d = head_dim_of(r, h, a)
    vocab = r.int("vocab_size", default=100352, limit="vocab")
    tied = r.bool("tie_word_embeddings", default=True)
    ctx = r.int("max_position_embeddings", default=131072, limit="context")
    bias = r.bool("attention_bias", default=False)
    e = r.int("num_local_experts", default=0, lo=0, limit="experts")
    inter = r.int("intermediate_size", default=0, lo=0, limit="intermediate")
    shared_i = r.int("shared_intermediate_size", default=0, lo=0, limit="intermediate")
    kinds = attention_kinds(r, n, lambda i: False, None, linear_ok=True)
    full = sum(1 for kd, _ in kinds if kd == "full")
    mamba = n - full
    shapes = mamba2_shapes(r, h, heads="mamba_n_heads", head_dim="mamba_d_head",
                           state="mamba_d_state", groups="mamba_n_groups", conv="mamba_d_conv",
                           expand="mamba_expand", defaults={"mamba_n_heads": 128})

    b = Build()
    embed_and_head(b, vocab, h, tied)
    gqa_attention(b, h, a, k, d, full, qkv_bias=bias, o_bias=bias)
    state, _ = mamba2_mixer(b, h, mamba, shapes, proj_bias=r.bool("mamba_proj_bias"),
                              conv_bias=r.bool("mamba_conv_bias", default=True))
    b.add("norms", 2 * h * n + h)
    moe = None
    if e:
        top = r.int("num_experts_per_tok", limit="experts")
        check_top_k(r, top, e, "num_experts_per_tok")
        moe = MoESpec(num_experts=e, experts_per_token=top, num_shared_experts=1 if shared_i
                      else 0, expert_intermediate_size=inter,
                      shared_expert_intermediate_size=shared_i, moe_layers=n)
        b.linear("router", h, e, n, "router", lora=False)
        b.linear("input_linear", h, 2 * inter, n * e, "experts", expert=True)
        b.linear("output_linear", inter, h, n * e, "experts", expert=True)
    part = "shared_experts" if e else "mlp"
    b.linear("input_linear", h, 2 * shared_i, n, part)
    b.linear("output_linear", shared_i, h, n, part)

    layers = [LayerSpec(attention="full", kv_heads=k, head_dim=d, v_head_dim=d, moe=bool(e),
                        rope=False) if kd == "full" else
              LayerSpec(attention="linear", moe=bool(e), state_elements=state)
              for kd, _ in kinds]
    notes = [f"{mamba} of {n} layers are Mamba-2: a constant state of {state:,} elements per "
             f"sequence each, no KV cache; {full} attention layers (no position embeddings)"]
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                intermediate=shared_i or inter, vocab=vocab, tied=tied, max_ctx=ctx,
                layers=layers, moe=moe, notes=notes, architecture=mt)


_NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


def nemotron_h(r: ConfigReader, mt: str) -> Arch:
    """NVIDIA Nemotron-H and Nemotron 3 (NemotronHForCausalLM): one mixer per layer, chosen by
    ``hybrid_override_pattern`` (M Mamba-2, * attention, - a non-gated squared-ReLU MLP, E MoE:
    a sigmoid router with its correction bias, non-gated experts and a shared expert), each
    after an RMSNorm. Latent MoE (``moe_latent_size``) and MTP layers are not modelled and are
    refused."""
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    k = r.int("num_key_value_heads", default=a, limit="heads")
    d = r.int("head_dim", "attention_head_dim", default=h // a, limit="hidden")
    vocab = r.int("vocab_size", default=131072, limit="vocab")
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=8192, limit="context")
    inter = r.int("intermediate_size", limit="intermediate")
    pattern = r.str("hybrid_override_pattern")
    if len(pattern) != n or set(pattern) - set(_NEMOTRON_BLOCKS):
        raise DataError(r.origin, f"expected {n} characters from M, *, - and E, got "
                        f"{pattern!r:.60}", field=r.prefix + "hybrid_override_pattern")
    for unmodelled in ("moe_latent_size", "mtp_hybrid_override_pattern"):
        if r.has(unmodelled):
            raise DataError(r.origin, f"{unmodelled}: latent MoE and multi-token-prediction "
                            "blocks of Nemotron 3 Super/Ultra are not modelled here; their "
                            "weights would be wrong", field=r.prefix + unmodelled)
    count = {kind: pattern.count(ch) for ch, kind in _NEMOTRON_BLOCKS.items()}
    shapes = mamba2_shapes(r, h, heads="mamba_num_heads", head_dim="mamba_head_dim",
                           state="ssm_state_size", groups="n_groups", conv="conv_kernel",
                           expand=None, defaults={"mamba_num_heads": 128})

    b = Build()
    embed_and_head(b, vocab, h, tied)
    gqa_attention(b, h, a, k, d, count["attention"], qkv_bias=r.bool("attention_bias"),
                  o_bias=r.bool("attention_bias"))
    state, ssm = mamba2_mixer(b, h, count["mamba"], shapes, proj_bias=r.bool(
        "mamba_proj_bias"), conv_bias=r.bool("use_conv_bias", default=True))
    mlp_bias = r.bool("mlp_bias")
    b.linear("up_proj", h, inter, count["mlp"], "mlp", bias=mlp_bias)
    b.linear("down_proj", inter, h, count["mlp"], "mlp", bias=mlp_bias)
    b.add("norms", h * n + h)
    moe = None
    ml = count["moe"]
    if ml:
        e = r.int("n_routed_experts", limit="experts")
        top = r.int("num_experts_per_tok", limit="experts")
        check_top_k(r, top, e, "num_experts_per_tok")
        mi = r.int("moe_intermediate_size", limit="intermediate")
        si = r.int("moe_shared_expert_intermediate_size", default=0, lo=0, limit="intermediate")
        ns = r.int("n_shared_experts", default=1 if si else 0, lo=0, limit="experts")
        moe = MoESpec(num_experts=e, experts_per_token=top, num_shared_experts=ns,
                      expert_intermediate_size=mi, shared_expert_intermediate_size=si * ns,
                      moe_layers=ml, dense_layers=n - ml)
        b.linear("gate", h, e, ml, "router", lora=False)
        b.add("router", e * ml)  # e_score_correction_bias
        b.linear("up_proj", h, mi, ml * e, "experts", bias=mlp_bias, expert=True)
        b.linear("down_proj", mi, h, ml * e, "experts", bias=mlp_bias, expert=True)
        b.linear("up_proj", h, si * ns, ml, "shared_experts", bias=mlp_bias)
        b.linear("down_proj", si * ns, h, ml, "shared_experts", bias=mlp_bias)

    fp32 = _fp32_state(r, "mamba_ssm_cache_dtype")
    layers = []
    for ch in pattern:
        kind = _NEMOTRON_BLOCKS[ch]
        if kind == "mamba":
            layers.append(LayerSpec(attention="linear", state_elements=state,
                                    state_fp32_elements=ssm if fp32 else 0))
        elif kind == "attention":
            layers.append(LayerSpec(attention="full", kv_heads=k, head_dim=d, v_head_dim=d))
        else:  # an MLP or MoE block: no token mixing, nothing cached
            layers.append(LayerSpec(attention="none", moe=kind == "moe"))
    notes = [f"{count['mamba']} Mamba-2 layers (a constant state of {state:,} elements per "
             "sequence each" + (", the SSM part in float32" if fp32 else "") + f"), "
             f"{count['attention']} attention layers, {count['mlp'] + ml} MLP/MoE layers "
             "(no cache)"]
    return Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                moe=moe, gated=False, notes=notes, architecture=mt)
