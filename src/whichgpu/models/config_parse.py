"""config.json → ModelSpec, one parser per ``model_type``.

Parameter counts are exact sums over the tensors transformers creates for that
architecture (weights, biases, norms, embeddings), so they match a checkpoint's safetensors
total. What the usual rules of thumb get wrong is handled explicitly: grouped-query attention
(``num_key_value_heads``), an explicit ``head_dim`` that is not hidden/heads (Gemma, Qwen3),
tied embeddings (no separate LM head), MoE total vs active parameters, MLA projections
(DeepSeek) and per-layer sliding windows (Mistral, Gemma 2/3, gpt-oss, Phi-3).

``linears`` lists the projections a LoRA targets, by PEFT module name, with exact shapes;
MoE routers are not in it (they are counted in ``params.router``) and neither is the LM head.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from whichgpu.errors import DataError, InputError
from whichgpu.models.bounds import check_config, check_spec
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.spec import LayerSpec, LinearGroup, MLASpec, ModelSpec, MoESpec, ParamCounts

_DTYPES = {
    "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "float32": "fp32", "fp32": "fp32", "float": "fp32", "float8_e4m3fn": "fp8", "fp8": "fp8",
}


# ---------------------------------------------------------------------------- building blocks

@dataclass
class _Build:
    """Accumulates linears and parameter counts by component."""

    groups: list[LinearGroup] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("embedding", "attention", "mlp", "experts", "shared_experts", "router", "lm_head",
         "norms", "other"), 0))

    def linear(self, name: str, fin: int, fout: int, count: int, part: str, *,
               bias: bool = False, expert: bool = False, lora: bool = True) -> None:
        if count <= 0:
            return
        if lora:
            self.groups.append(LinearGroup(name, fin, fout, count, expert=expert, bias=bias))
        self.counts[part] += (fin * fout + (fout if bias else 0)) * count

    def add(self, part: str, n: int) -> None:
        self.counts[part] += n


@dataclass
class _Arch:
    """What a parser found; turned into a ModelSpec by :func:`parse_config`."""

    b: _Build
    num_layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    max_ctx: int
    layers: list[LayerSpec]
    gated: bool = True
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    notes: list[str] = field(default_factory=list)
    architecture: str = ""


def _embed_and_head(b: _Build, vocab: int, hidden: int, tied: bool) -> None:
    b.add("embedding", vocab * hidden)
    if not tied:
        b.add("lm_head", vocab * hidden)


def _attention_kinds(r: ConfigReader, n_layers: int, rule: Callable[[int], bool],
                     window: int | None, *, linear_ok: bool = False
                     ) -> list[tuple[str, int | None]]:
    """(kind, window) per layer: ``layer_types`` when the config has it, else ``rule``.

    Linear-attention / SSM layer types are accepted only by parsers that know their state
    shapes (``linear_ok``); elsewhere they are refused rather than counted as stateless.
    """
    types = r.str_list("layer_types")
    if types is not None:
        if len(types) != n_layers:
            raise DataError(r.origin, f"has {len(types)} entries, expected one per layer "
                            f"({n_layers})", field=r.prefix + "layer_types")
        out = []
        for t in types:
            if t in ("full_attention", "global", "attention"):
                out.append(("full", None))
            elif t in ("sliding_attention", "local", "chunked_attention"):
                if window is None:
                    raise DataError(r.origin, "layer_types has sliding layers but no window is "
                                    "given", field=r.prefix + "sliding_window")
                out.append(("sliding", window))
            elif t in ("linear_attention", "mamba", "recurrent"):
                if not linear_ok:
                    raise DataError(r.origin, f"layer type {t!r}: the recurrent state of this "
                                    "architecture is not modelled here (only qwen3_next's "
                                    "Gated DeltaNet is); its memory would be wrong",
                                    field=r.prefix + "layer_types")
                out.append(("linear", None))
            else:
                raise DataError(r.origin, f"unknown layer type {t!r}",
                                field=r.prefix + "layer_types")
        return out
    return [("sliding", window) if window and rule(i) else ("full", None)
            for i in range(n_layers)]


# ---------------------------------------------------------------------------- llama-like

@dataclass(frozen=True)
class _Style:
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


_STYLES: dict[str, _Style] = {
    "llama": _Style(),
    "mistral": _Style(sliding="all", window=4096, ctx=4096 * 32),
    "mixtral": _Style(sliding="all", ctx=4096 * 32, moe="mixtral"),
    "qwen2": _Style(qkv_bias=True, o_bias=False, sliding="qwen", ctx=32768, vocab=151936),
    "qwen2_moe": _Style(qkv_bias=True, o_bias=False, sliding="qwen", ctx=32768, vocab=151936,
                        moe="qwen2_moe"),
    "qwen3": _Style(qk_norm=True, head_dim=128, sliding="qwen", ctx=32768, vocab=151936),
    "qwen3_moe": _Style(qk_norm=True, head_dim=128, sliding="qwen", ctx=32768, vocab=151936,
                        moe="qwen3_moe"),
    "gemma": _Style(head_dim=256, vocab=256000, tie=True, ctx=8192),
    "gemma2": _Style(head_dim=256, vocab=256000, tie=True, ctx=8192, layer_norms=4,
                     sliding="alternate", window=4096),
    "gemma3_text": _Style(qk_norm=True, head_dim=256, vocab=262208, tie=True, ctx=131072,
                          layer_norms=4, sliding="pattern", window=4096),
    "phi3": _Style(fused=True, ctx=4096, vocab=32064, sliding="all"),
    "gpt_oss": _Style(qkv_bias=True, o_bias=True, head_dim=64, ctx=131072, sliding="alternate",
                      window=128, moe="gpt_oss"),
}


def _decoder_dims(r: ConfigReader) -> tuple[int, int, int, int]:
    """hidden size, layers, attention heads and KV heads (which must share them evenly)."""
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    k = r.int("num_key_value_heads", default=a, limit="heads")
    if a % k:
        raise DataError(r.origin, f"{a} attention heads cannot be shared by {k} KV heads",
                        field=r.prefix + "num_key_value_heads")
    return h, n, a, k


def _llama_like(r: ConfigReader, mt: str) -> _Arch:
    st = _STYLES[mt]
    h, n, a, k = _decoder_dims(r)
    d = r.int("head_dim", default=st.head_dim or 0, limit="hidden") or 0
    if not d:
        if h % a:
            raise DataError(r.origin, f"hidden_size {h} is not a multiple of {a} heads; "
                            "give head_dim", field=r.prefix + "head_dim")
        d = h // a
    inter = r.int("intermediate_size", limit="intermediate")
    vocab = r.int("vocab_size", limit="vocab", **({"default": st.vocab} if st.vocab else {}))
    tied = r.bool("tie_word_embeddings", default=st.tie)
    ctx = r.int("max_position_embeddings", default=st.ctx, limit="context")
    attn_bias = r.bool("attention_bias", default=False)
    qkv_bias = attn_bias if st.qkv_bias is None else st.qkv_bias
    o_bias = attn_bias if st.o_bias is None else st.o_bias
    mlp_bias = r.bool("mlp_bias", default=False)

    b = _Build()
    _embed_and_head(b, vocab, h, tied)
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
    b.add("norms", st.layer_norms * h * n + h + (2 * d * n if st.qk_norm else 0))

    # which layers are MoE
    moe_spec = None
    moe_layers = [False] * n
    if st.moe:
        moe_layers, moe_spec = _moe_layout(r, st.moe, n, inter)
    dense = moe_layers.count(False)
    if st.fused:
        b.linear("gate_up_proj", h, 2 * inter, dense, "mlp", bias=mlp_bias)
    else:
        b.linear("gate_proj", h, inter, dense, "mlp", bias=mlp_bias)
        b.linear("up_proj", h, inter, dense, "mlp", bias=mlp_bias)
    b.linear("down_proj", inter, h, dense, "mlp", bias=mlp_bias)
    if moe_spec:
        _moe_linears(b, st.moe, h, moe_spec)

    # attention kind per layer
    window = r.opt_int("sliding_window", limit="context")
    if "sliding_window" not in r.data:
        window = st.window
    if window is not None and window >= ctx and r.str_list("layer_types") is None:
        window = None  # a window as long as the context is full attention
    rule = _sliding_rule(r, st.sliding, n)
    kinds = _attention_kinds(r, n, rule, window)
    layers = [LayerSpec(attention=kind, window=w, kv_heads=k if kind != "linear" else 0,
                        head_dim=d, v_head_dim=d, moe=moe_layers[i])
              for i, (kind, w) in enumerate(kinds)]
    n_sliding = sum(1 for kd, _ in kinds if kd == "sliding")
    if n_sliding:
        notes.append(f"{n_sliding} of {n} layers use a sliding window of {window} tokens")
    if d * a != h:
        notes.append(f"head_dim {d} is not hidden_size/heads ({h}/{a})")
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
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
    if top > e:
        raise DataError(r.origin, f"{top} experts per token but only {e} experts",
                        field=r.prefix + "num_experts_per_tok")
    return layers, spec


def _moe_linears(b: _Build, kind: str, h: int, m: MoESpec) -> None:
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
        b.linear("gate_proj", h, mi, ml * e, "experts", expert=True)
        b.linear("up_proj", h, mi, ml * e, "experts", expert=True)
        b.linear("down_proj", mi, h, ml * e, "experts", expert=True)
        if m.num_shared_experts:
            si = m.shared_expert_intermediate_size
            b.linear("gate_proj", h, si, ml, "shared_experts")
            b.linear("up_proj", h, si, ml, "shared_experts")
            b.linear("down_proj", si, h, ml, "shared_experts")
            b.linear("shared_expert_gate", h, 1, ml, "shared_experts", lora=False)


# ---------------------------------------------------------------------------- Qwen3-Next

def _qwen3_next(r: ConfigReader, mt: str) -> _Arch:
    """Qwen3-Next: Gated DeltaNet (linear attention) layers and gated full-attention layers in
    a 3:1 pattern, a sparse MoE with a shared expert in every layer.

    Shapes follow transformers' modeling_qwen3_next.py: full attention projects q and an
    output gate together (q_proj out = 2 x heads x head_dim) with q/k RMSNorms; a Gated
    DeltaNet layer has in_proj_qkvz (hidden -> 2 key_dim + 2 value_dim), in_proj_ba
    (hidden -> 2 value heads), a depthwise conv1d over the q, k, v channels, dt_bias and A_log
    per value head, a gated RMSNorm(head_v_dim) and out_proj (value_dim -> hidden).
    Its state per sequence: conv_dim x (kernel - 1) + value_heads x key_head_dim x
    value_head_dim (vLLM's mamba state shapes for GDN), constant in the context length.
    """
    h, n, a, k = _decoder_dims(r)
    d = r.int("head_dim", default=256, limit="hidden")
    inter = r.int("intermediate_size", limit="intermediate")
    vocab = r.int("vocab_size", default=151936, limit="vocab")
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=262144, limit="context")
    bias = r.bool("attention_bias", default=False)
    kh = r.int("linear_num_key_heads", limit="heads")
    vh = r.int("linear_num_value_heads", limit="heads")
    dk = r.int("linear_key_head_dim", limit="hidden")
    dv = r.int("linear_value_head_dim", limit="hidden")
    kern = r.int("linear_conv_kernel_dim", default=4, limit="layers")
    interval = r.int("full_attention_interval", default=4, limit="layers")
    key_dim, value_dim = kh * dk, vh * dv
    conv_dim = 2 * key_dim + value_dim

    if r.str_list("layer_types") is not None:
        kinds = _attention_kinds(r, n, lambda i: False, None, linear_ok=True)
    else:  # every interval-th layer is full attention, the others Gated DeltaNet
        kinds = [("full" if (i + 1) % interval == 0 else "linear", None) for i in range(n)]
    full = sum(1 for kd, _ in kinds if kd == "full")
    lin = n - full

    b = _Build()
    _embed_and_head(b, vocab, h, tied)
    b.linear("q_proj", h, 2 * a * d, full, "attention", bias=bias)  # query + output gate
    b.linear("k_proj", h, k * d, full, "attention", bias=bias)
    b.linear("v_proj", h, k * d, full, "attention", bias=bias)
    b.linear("o_proj", a * d, h, full, "attention", bias=bias)
    b.linear("in_proj_qkvz", h, 2 * key_dim + 2 * value_dim, lin, "attention")
    b.linear("in_proj_ba", h, 2 * vh, lin, "attention")
    b.linear("out_proj", value_dim, h, lin, "attention")
    b.add("attention", (conv_dim * kern + 2 * vh) * lin)  # depthwise conv1d, dt_bias, A_log
    b.add("norms", 2 * h * n + h + 2 * d * full + dv * lin)

    moe_layers, moe_spec = _moe_layout(r, "qwen2_moe", n, inter)
    dense = moe_layers.count(False)
    b.linear("gate_proj", h, inter, dense, "mlp")
    b.linear("up_proj", h, inter, dense, "mlp")
    b.linear("down_proj", inter, h, dense, "mlp")
    _moe_linears(b, "qwen2_moe", h, moe_spec)

    state = conv_dim * (kern - 1) + vh * dk * dv
    layers = [LayerSpec(attention="full", kv_heads=k, head_dim=d, v_head_dim=d,
                        moe=moe_layers[i]) if kd == "full" else
              LayerSpec(attention="linear", moe=moe_layers[i], state_elements=state)
              for i, (kd, _) in enumerate(kinds)]
    notes = [f"{lin} of {n} layers are Gated DeltaNet (linear attention): a constant state of "
             f"{state:,} elements per sequence each, no KV cache; {full} full-attention layers",
             "the checkpoint also holds a multi-token-prediction layer (mtp.*), not counted"]
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                 intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                 moe=moe_spec, notes=notes, architecture=mt)


# ---------------------------------------------------------------------------- DeepSeek (MLA)

def _deepseek(r: ConfigReader, mt: str) -> _Arch:
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    kvh = r.int("num_key_value_heads", default=a, limit="heads")
    inter = r.int("intermediate_size", limit="intermediate")
    vocab = r.int("vocab_size", limit="vocab")
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=2048, limit="context")
    q_lora = r.opt_int("q_lora_rank", limit="hidden")
    kv_lora = r.int("kv_lora_rank", limit="hidden")
    rope = r.int("qk_rope_head_dim", limit="hidden")
    nope = r.int("qk_nope_head_dim", limit="hidden")
    v = r.int("v_head_dim", limit="hidden")
    bias = r.bool("attention_bias", default=False)
    qk = nope + rope

    b = _Build()
    _embed_and_head(b, vocab, h, tied)
    if q_lora:
        b.linear("q_a_proj", h, q_lora, n, "attention", bias=bias)
        b.linear("q_b_proj", q_lora, a * qk, n, "attention")
        b.add("norms", q_lora * n)
    else:
        b.linear("q_proj", h, a * qk, n, "attention")
    b.linear("kv_a_proj_with_mqa", h, kv_lora + rope, n, "attention", bias=bias)
    b.linear("kv_b_proj", kv_lora, a * (nope + v), n, "attention")
    b.linear("o_proj", a * v, h, n, "attention", bias=bias)
    b.add("norms", kv_lora * n + 2 * h * n + h)

    e = r.int("n_routed_experts", default=0, lo=0, limit="experts")
    moe_layers = [False] * n
    moe = None
    if e:
        top = r.int("num_experts_per_tok", limit="experts")
        shared = r.int("n_shared_experts", default=0, lo=0, limit="experts")
        mi = r.int("moe_intermediate_size", limit="intermediate")
        first = r.int("first_k_dense_replace", default=0, lo=0, limit="layers")
        freq = r.int("moe_layer_freq", default=1, limit="layers")
        if top > e:
            raise DataError(r.origin, f"{top} experts per token but only {e} experts",
                            field=r.prefix + "num_experts_per_tok")
        moe_layers = [i >= first and i % freq == 0 for i in range(n)]
        ml = sum(moe_layers)
        moe = MoESpec(num_experts=e, experts_per_token=top, num_shared_experts=shared,
                      expert_intermediate_size=mi, shared_expert_intermediate_size=mi * shared,
                      moe_layers=ml, dense_layers=n - ml)
        b.linear("gate", h, e, ml, "router", lora=False)
        if r.raw("topk_method") == "noaux_tc":
            b.add("router", e * ml)  # e_score_correction_bias
        b.linear("gate_proj", h, mi, ml * e, "experts", expert=True)
        b.linear("up_proj", h, mi, ml * e, "experts", expert=True)
        b.linear("down_proj", mi, h, ml * e, "experts", expert=True)
        if shared:
            b.linear("gate_proj", h, mi * shared, ml, "shared_experts")
            b.linear("up_proj", h, mi * shared, ml, "shared_experts")
            b.linear("down_proj", mi * shared, h, ml, "shared_experts")
    dense = moe_layers.count(False)
    b.linear("gate_proj", h, inter, dense, "mlp")
    b.linear("up_proj", h, inter, dense, "mlp")
    b.linear("down_proj", inter, h, dense, "mlp")

    mla = MLASpec(kv_lora_rank=kv_lora, qk_rope_head_dim=rope, qk_nope_head_dim=nope,
                  v_head_dim=v, q_lora_rank=q_lora)
    layers = [LayerSpec(attention="full", kv_heads=a, head_dim=qk, v_head_dim=v, moe=m)
              for m in moe_layers]
    notes = [f"MLA: the KV cache holds {kv_lora + rope} elements per token per layer "
             f"(kv_lora_rank {kv_lora} + rope {rope}), not per-head keys and values"]
    mtp = r.int("num_nextn_predict_layers", default=0, lo=0, limit="layers")
    if mtp:
        notes.append(f"the checkpoint also holds {mtp} multi-token-prediction layer(s), "
                     "not counted here (used only for speculative decoding)")
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=kvh, head_dim=qk,
                 intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                 moe=moe, mla=mla, notes=notes, architecture=mt)


# ---------------------------------------------------------------------------- GPT-2 family

def _gpt2(r: ConfigReader, mt: str) -> _Arch:
    h = r.int("n_embd", "hidden_size", limit="hidden")
    n = r.int("n_layer", "num_hidden_layers", limit="layers")
    a = r.int("n_head", "num_attention_heads", limit="heads")
    vocab = r.int("vocab_size", default=50257, limit="vocab")
    pos = r.int("n_positions", "max_position_embeddings", default=1024, limit="context")
    inner = r.int("n_inner", default=4 * h, limit="intermediate")
    tied = r.bool("tie_word_embeddings", default=True)
    _heads_divide(r, h, a, "n_head")
    b = _Build()
    _embed_and_head(b, vocab, h, tied)
    b.add("embedding", pos * h)  # learned position embeddings (wpe)
    b.linear("c_attn", h, 3 * h, n, "attention", bias=True)
    b.linear("c_proj", h, h, n, "attention", bias=True)
    b.linear("c_fc", h, inner, n, "mlp", bias=True)
    b.linear("c_proj", inner, h, n, "mlp", bias=True)
    b.add("norms", 4 * h * n + 2 * h)
    layers = [LayerSpec(kv_heads=a, head_dim=h // a, v_head_dim=h // a)] * n
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=a, head_dim=h // a,
                 intermediate=inner, vocab=vocab, tied=tied, max_ctx=pos, layers=layers,
                 gated=False, architecture=mt)


def _gpt_neox(r: ConfigReader, mt: str) -> _Arch:
    h = r.int("hidden_size", limit="hidden")
    n = r.int("num_hidden_layers", limit="layers")
    a = r.int("num_attention_heads", limit="heads")
    inter = r.int("intermediate_size", default=4 * h, limit="intermediate")
    vocab = r.int("vocab_size", limit="vocab")
    ctx = r.int("max_position_embeddings", default=2048, limit="context")
    tied = r.bool("tie_word_embeddings", default=False)
    bias = r.bool("attention_bias", default=True)
    _heads_divide(r, h, a, "num_attention_heads")
    b = _Build()
    _embed_and_head(b, vocab, h, tied)
    b.linear("query_key_value", h, 3 * h, n, "attention", bias=bias)
    b.linear("dense", h, h, n, "attention", bias=bias)
    b.linear("dense_h_to_4h", h, inter, n, "mlp", bias=True)
    b.linear("dense_4h_to_h", inter, h, n, "mlp", bias=True)
    b.add("norms", 4 * h * n + 2 * h)
    d = h // a
    layers = [LayerSpec(kv_heads=a, head_dim=d, v_head_dim=d)] * n
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=a, head_dim=d,
                 intermediate=inter, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                 gated=False, architecture=mt)


def _falcon(r: ConfigReader, mt: str) -> _Arch:
    h = r.int("hidden_size", "n_embed", limit="hidden")
    n = r.int("num_hidden_layers", "n_layer", limit="layers")
    a = r.int("num_attention_heads", "n_head", limit="heads")
    vocab = r.int("vocab_size", limit="vocab")
    ctx = r.int("max_position_embeddings", default=2048, limit="context")
    tied = r.bool("tie_word_embeddings", default=True)
    new = r.bool("new_decoder_architecture", default=False)
    mq = r.bool("multi_query", default=True)
    parallel = r.bool("parallel_attn", default=True)
    bias = r.bool("bias", default=False)
    ffn = r.int("ffn_hidden_size", default=4 * h, limit="intermediate")
    _heads_divide(r, h, a, "num_attention_heads")
    d = h // a
    if new:
        k = r.int("num_kv_heads", "n_head_kv", default=a, limit="heads")
    else:
        k = 1 if mq else a
    b = _Build()
    _embed_and_head(b, vocab, h, tied)
    b.linear("query_key_value", h, (a + 2 * k) * d, n, "attention", bias=bias)
    b.linear("dense", h, h, n, "attention", bias=bias)
    b.linear("dense_h_to_4h", h, ffn, n, "mlp", bias=bias)
    b.linear("dense_4h_to_h", ffn, h, n, "mlp", bias=bias)
    if new:
        lns = r.int("num_ln_in_parallel_attn", default=2, limit="layers")
    else:
        lns = 1 if parallel else 2
    b.add("norms", 2 * h * lns * n + 2 * h)
    layers = [LayerSpec(kv_heads=k, head_dim=d, v_head_dim=d)] * n
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                 intermediate=ffn, vocab=vocab, tied=tied, max_ctx=ctx, layers=layers,
                 gated=False, architecture="falcon")


def _mpt(r: ConfigReader, mt: str) -> _Arch:
    h = r.int("d_model", limit="hidden")
    n = r.int("n_layers", limit="layers")
    a = r.int("n_heads", limit="heads")
    vocab = r.int("vocab_size", limit="vocab")
    ctx = r.int("max_seq_len", default=2048, limit="context")
    ratio = r.int("expansion_ratio", default=4, limit="heads")
    no_bias = r.bool("no_bias", default=True)
    _heads_divide(r, h, a, "n_heads")
    d = h // a
    k = a
    if r.has("attn_config"):
        ac = r.sub("attn_config")
        if ac.raw("attn_type") == "grouped_query_attention":
            k = ac.int("kv_n_heads", default=a, limit="heads")
    b = _Build()
    _embed_and_head(b, vocab, h, True)  # MPT always ties the output to wte
    b.linear("Wqkv", h, h + 2 * k * d, n, "attention", bias=not no_bias)
    b.linear("out_proj", h, h, n, "attention", bias=not no_bias)
    b.linear("up_proj", h, ratio * h, n, "mlp", bias=not no_bias)
    b.linear("down_proj", ratio * h, h, n, "mlp", bias=not no_bias)
    per_norm = h if no_bias else 2 * h
    b.add("norms", per_norm * (2 * n + 1))
    layers = [LayerSpec(kv_heads=k, head_dim=d, v_head_dim=d)] * n
    return _Arch(b=b, num_layers=n, hidden=h, heads=a, kv_heads=k, head_dim=d,
                 intermediate=ratio * h, vocab=vocab, tied=True, max_ctx=ctx, layers=layers,
                 gated=False, architecture=mt)


def _heads_divide(r: ConfigReader, h: int, a: int, name: str) -> None:
    if h % a:
        raise DataError(r.origin, f"hidden size {h} is not a multiple of {a} heads",
                        field=r.prefix + name)


# ---------------------------------------------------------------------------- multimodal wrapper

def _siglip_params(v: ConfigReader) -> int:
    """A SigLIP vision tower (no pooling head): patch and position embeddings + encoder."""
    hv = v.int("hidden_size", default=768, limit="hidden")
    iv = v.int("intermediate_size", default=3072, limit="intermediate")
    nl = v.int("num_hidden_layers", default=12, limit="layers")
    patch = v.int("patch_size", default=16, limit="hidden")
    image = v.int("image_size", default=224, limit="hidden")
    ch = v.int("num_channels", default=3, limit="hidden")
    total = ch * patch * patch * hv + hv + (image // patch) ** 2 * hv
    total += nl * (4 * (hv * hv + hv) + hv * iv + iv + iv * hv + hv + 4 * hv)
    return total + 2 * hv


def _gemma3(r: ConfigReader, mt: str) -> _Arch:
    if not r.has("text_config"):  # a text-only checkpoint saved with model_type gemma3
        return _llama_like(r, "gemma3_text")
    arch = _llama_like(r.sub("text_config"), "gemma3_text")
    if r.has("vision_config"):
        v = r.sub("vision_config")
        vision = _siglip_params(v)
        hv = v.int("hidden_size", default=768, limit="hidden")
        projector = hv * arch.hidden + hv  # mm_input_projection_weight + mm_soft_emb_norm
        arch.b.add("other", vision + projector)
        arch.notes.append(f"includes a SigLIP vision tower and projector "
                          f"({(vision + projector) / 1e6:,.0f}M parameters, in 'other')")
    arch.architecture = "gemma3"
    return arch


_PARSERS: dict[str, Callable[[ConfigReader, str], _Arch]] = {
    **{mt: _llama_like for mt in _STYLES},
    "gemma3": _gemma3,
    "qwen3_next": _qwen3_next,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "gpt2": _gpt2,
    "gpt_neox": _gpt_neox,
    "falcon": _falcon,
    "mpt": _mpt,
}
_ALIASES = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted(_PARSERS))


# ---------------------------------------------------------------------------- entry point

def parse_config(data: Any, *, origin: str, source: str | None = None,
                 hub_id: str | None = None, name: str | None = None,
                 model_id: str | None = None) -> ModelSpec:
    """A decoder ModelSpec from a parsed config.json.

    ``origin`` names the file in error messages; ``source`` is recorded in the spec
    (defaults to ``config:<origin>``).
    """
    check_config(data, origin)  # dimensions no real model has: refused before parsing
    r = ConfigReader(data, origin)
    mt = r.str("model_type").strip()
    key = _ALIASES.get(mt.lower(), mt.lower())
    parser = _PARSERS.get(key)
    if parser is None:
        raise InputError(
            f"{origin}: model_type {mt!r} is not supported; supported model types: "
            f"{', '.join(SUPPORTED_MODEL_TYPES)}. Use a bare size such as '7B' for a rough "
            "estimate instead.")
    arch = parser(r, key)
    c = arch.b.counts
    total = sum(c.values())
    active = total
    if arch.moe and c["experts"]:
        m = arch.moe
        active = total - c["experts"] + c["experts"] * m.experts_per_token // m.num_experts
    params = ParamCounts(active=active, **c)
    dtype = _native_dtype(r)
    notes = list(arch.notes)
    if arch.tied:
        notes.append("the LM head is tied to the token embedding (no separate lm_head)")
    quant = quantization_of(r.raw("quantization_config"))
    if dtype is None and quant:
        dtype = "bf16"
        notes.append(f"no torch_dtype in the config: the tensors not in {quant} are assumed "
                     "bf16")
    elif dtype is None:
        notes.append("no torch_dtype in the config: assuming float32 weights")
    display = name or _display_name(data, hub_id, origin)
    return check_spec(ModelSpec(
        id=model_id or hub_id or origin, name=display, family="decoder",
        architecture=arch.architecture, source=source or f"config:{origin}", params=params,
        num_layers=arch.num_layers, hidden_size=arch.hidden,
        num_attention_heads=arch.heads, num_kv_heads=arch.kv_heads, head_dim=arch.head_dim,
        intermediate_size=arch.intermediate, vocab_size=arch.vocab,
        tie_word_embeddings=arch.tied, max_context=arch.max_ctx, gated_mlp=arch.gated,
        layers=tuple(arch.layers), linears=tuple(arch.b.groups), moe=arch.moe, mla=arch.mla,
        native_dtype=dtype or "fp32", quantization=quant, hub_id=hub_id,
        notes=tuple(notes)), origin)


def _native_dtype(r: ConfigReader) -> str | None:
    raw = r.raw("torch_dtype") or r.raw("dtype")
    if raw is None and r.has("text_config"):
        t = r.data["text_config"]
        raw = t.get("torch_dtype") or t.get("dtype") if isinstance(t, Mapping) else None
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise DataError(r.origin, f"expected a dtype name, got {raw!r:.40}", field="torch_dtype")
    return _DTYPES.get(raw.lower().removeprefix("torch."), raw.lower())


def quantization_of(qc: Any) -> str | None:
    """The weight format a ``quantization_config`` names, as a ``--quant`` name where one fits."""
    if not isinstance(qc, Mapping):
        return None
    method = str(qc.get("quant_method", "")).lower()
    bits = qc.get("bits")
    if method == "fp8" or (method == "compressed-tensors" and "fp8" in str(qc).lower()):
        return "fp8"
    if method in ("mxfp4", "nvfp4"):
        return method
    if method == "gptq":
        return "gptq-int8" if bits == 8 else "gptq"
    if method == "awq":
        return "awq"
    if method == "bitsandbytes":
        if qc.get("load_in_8bit"):
            return "int8"
        kind = str(qc.get("bnb_4bit_quant_type", "nf4")).lower()
        dq = "-dq" if qc.get("bnb_4bit_use_double_quant") else ""
        return f"{kind}{dq}"
    if method == "modelopt":
        algo = str(qc.get("quant_algo", "")).lower()
        return "nvfp4" if "fp4" in algo else "fp8" if "fp8" in algo else algo or method
    return method or None


def _display_name(data: Mapping, hub_id: str | None, origin: str) -> str:
    if hub_id:
        return hub_id.split("/")[-1]
    name = data.get("_name_or_path") if isinstance(data, Mapping) else None
    if isinstance(name, str) and name:
        return name.rstrip("/").split("/")[-1]
    return origin
