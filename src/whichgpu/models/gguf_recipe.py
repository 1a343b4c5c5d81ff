"""llama.cpp's quantization mixes: which ggml type each tensor of a GGUF file gets.

A GGUF "file type" such as Q4_K_M is not one bits-per-weight: llama-quantize gives each tensor
a type by its role, its layer and the model's shape (``llama_tensor_get_type`` in
src/llama-quant.cpp: attn_v and ffn_down get more bits in the first and last eighth of the
layers and every third layer between (``use_more_bits``), the output tensor Q6_K, MoE expert
tensors the same rules by layer, rows whose length the block does not divide a fallback type).
This module applies those rules to a ModelSpec's linear layers, so a file's size follows from
the architecture, dense or MoE, instead of a whole-model average. The bits of each ggml type
come from its block layout (``data/ggml_types.toml``, from ggml-common.h).

Rules as of https://github.com/ggml-org/llama.cpp/blob/007dbbf3fd17eefe9b47fee45f48f7ba5e62b714/src/llama-quant.cpp
(``llama_tensor_get_type_impl``, ``tensor_type_fallback``, ``llama_ftype_get_default_type``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from whichgpu.messages import msg
from whichgpu.models.spec import LinearGroup, ModelSpec

Category = Literal["token_embd", "output", "attn_q", "attn_k", "attn_v", "attn_qkv",
                   "attn_kv_b", "attn_output", "ffn_up", "ffn_gate", "ffn_down", "other"]
KernelFamily = Literal["float", "legacy", "k", "iq", "fp4"]

RECIPE_SOURCE = ("https://github.com/ggml-org/llama.cpp/blob/"
                 "007dbbf3fd17eefe9b47fee45f48f7ba5e62b714/src/llama-quant.cpp "
                 "(llama_tensor_get_type_impl)")
TYPES_SOURCE = ("https://github.com/ggml-org/llama.cpp/blob/"
                "01243c587feceaa5d6a6c2305535ef2f549c48b8/ggml/src/ggml-common.h (block_* structs)")

# llama.cpp file type (the name in a GGUF file name, lower case) -> its default tensor type
# (llama_ftype_get_default_type). Note IQ2_S files default to IQ2_XS tensors, IQ2_M to IQ2_S,
# IQ3_XS and IQ3_M to IQ3_S.
FTYPES: dict[str, str] = {
    "f32": "F32", "f16": "F16", "bf16": "BF16",
    "q4_0": "Q4_0", "q4_1": "Q4_1", "q5_0": "Q5_0", "q5_1": "Q5_1", "q8_0": "Q8_0",
    "q2_k": "Q2_K", "q2_k_s": "Q2_K", "q3_k_s": "Q3_K", "q3_k_m": "Q3_K", "q3_k_l": "Q3_K",
    "q4_k_s": "Q4_K", "q4_k_m": "Q4_K", "q5_k_s": "Q5_K", "q5_k_m": "Q5_K", "q6_k": "Q6_K",
    "iq1_s": "IQ1_S", "iq1_m": "IQ1_M", "iq2_xxs": "IQ2_XXS", "iq2_xs": "IQ2_XS",
    "iq2_s": "IQ2_XS", "iq2_m": "IQ2_S", "iq3_xxs": "IQ3_XXS", "iq3_xs": "IQ3_S",
    "iq3_s": "IQ3_S", "iq3_m": "IQ3_S", "iq4_nl": "IQ4_NL", "iq4_xs": "IQ4_XS",
    "tq1_0": "TQ1_0", "tq2_0": "TQ2_0", "mxfp4_moe": "MXFP4", "nvfp4": "NVFP4",
}
# Unsloth's dynamic MoE quants (https://unsloth.ai/blog/deepseekr1-dynamic, 2025-01-27): the
# routed experts at a low-bit file type's rules, attention, dense layers and the rest at 4 or
# 6 bits (the Q4_K_M mix), shared experts at 6 bits (Q6_K). Made for MoE models only.
# Only the two whose down_proj types the blog states are modelled (UD-IQ1_S is checked against
# a published file size; the later "Dynamic 2.0" UD-Q*_K_XL mixes are chosen per model).
UNSLOTH_DYNAMIC: dict[str, str] = {"ud-iq1_s": "iq1_s", "ud-iq1_m": "iq1_m"}
UNSLOTH_SOURCE = ("https://unsloth.ai/blog/deepseekr1-dynamic (MoE layers at 1.58 / 1.73 / "
                  "2.22 / 2.51 bits, attention and the first dense layers at 4 or 6 bits, "
                  "shared experts at 6 bits)")
FTYPES.update({k: FTYPES[v] for k, v in UNSLOTH_DYNAMIC.items()})
# Unsloth's "Dynamic 2.0" UD-*_K_XL files: each tensor's type is chosen per model by
# calibration ("we now dynamically quantize all layers so every layer has a different bit",
# https://docs.unsloth.ai/basics/unsloth-dynamic-2.0-ggufs), so no fixed rule gives them; the
# file declares its base file type (llama-bench reports UD-Q4_K_XL files as 'Q4_K - Medium'),
# and its size follows that type's llama.cpp recipe within -6 % to +8 % on seven published
# files (validation/memory.csv rows mem-lhl-ud-*: llama-bench model_size in
# https://github.com/lhl/strix-halo-testing/tree/5ee14b5b0ecfbd16b7fd0aa41a91581c32b33b61/llm-bench).
# Sized as their base type; the estimate's uncertainty says so.
UNSLOTH_XL: dict[str, str] = {"ud-q2_k_xl": "q2_k", "ud-q3_k_xl": "q3_k_m",
                              "ud-q4_k_xl": "q4_k_m", "ud-q5_k_xl": "q5_k_m",
                              "ud-q6_k_xl": "q6_k", "ud-q8_k_xl": "q8_0"}
UNSLOTH_XL_SOURCE = ("https://docs.unsloth.ai/basics/unsloth-dynamic-2.0-ggufs (per-model "
                     "layer types); sizes: llama-bench model_size of UD-Q3/Q4/Q6_K_XL files in "
                     "https://github.com/lhl/strix-halo-testing/tree/"
                     "5ee14b5b0ecfbd16b7fd0aa41a91581c32b33b61/llm-bench")
FTYPES.update({k: FTYPES[v] for k, v in UNSLOTH_XL.items()})
# the blog's "Down_proj" column: (the first eighth of the ffn_down tensors, the others)
UNSLOTH_DOWN = {"ud-iq1_s": ("IQ2_XXS", "IQ1_S"), "ud-iq1_m": ("IQ2_XXS", "IQ2_XXS")}

# file types whose tensors need an importance matrix (tensor_requires_imatrix): published
# files of these types are always made with one
IMATRIX_REQUIRED = ("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq2_m", "iq3_xxs")
_LOW_IQ = ("iq2_xxs", "iq2_xs", "iq1_s", "iq2_s", "iq2_m", "iq1_m")
_ATTN_V_LIKE = ("attn_v", "attn_qkv", "attn_kv_b")
# tensor_type_fallback: a row length the block does not divide takes this type instead
_FALLBACK = {"IQ1_S": "IQ4_NL", "IQ1_M": "IQ4_NL", "IQ2_XXS": "IQ4_NL", "IQ2_XS": "IQ4_NL",
             "IQ2_S": "IQ4_NL", "IQ3_XXS": "IQ4_NL", "IQ3_S": "IQ4_NL", "IQ4_XS": "IQ4_NL",
             "Q2_K": "Q4_0", "Q3_K": "Q4_0", "TQ1_0": "Q4_0", "TQ2_0": "Q4_0",
             "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}


@dataclass(frozen=True)
class GgmlType:
    name: str
    block: int
    bytes: int
    family: KernelFamily

    @property
    def bits(self) -> float:
        return 8 * self.bytes / self.block


@cache
def ggml_types() -> dict[str, GgmlType]:
    """Every ggml type with its block size and bytes (data/ggml_types.toml)."""
    from whichgpu.parse_cache import cached_toml

    return {name: GgmlType(name, int(v["block"]), int(v["bytes"]), v["family"])
            for name, v in cached_toml("whichgpu.models", "data/ggml_types.toml")["type"].items()}


def ggml_type(name: str) -> GgmlType:
    return ggml_types()[name.upper()]


def is_gguf_ftype(name: str) -> bool:
    return name.lower() in FTYPES


@dataclass(frozen=True)
class GGUFTensor:
    """One weight tensor as llama.cpp names and sizes it (a 3-D tensor for a layer's experts)."""

    name: str  # blk.3.ffn_down_exps, token_embd, output
    category: Category
    layer: int | None
    params: int
    ncols: int  # row length (ne[0]): the input features of a linear
    expert: bool = False  # the routed experts of one layer
    shared: bool = False  # a shared expert


@dataclass(frozen=True)
class PlacedTensor:
    tensor: GGUFTensor
    type: str

    @property
    def bytes(self) -> float:
        t = ggml_type(self.type)
        return self.tensor.params * t.bytes / t.block


@dataclass(frozen=True)
class Recipe:
    """A model's weight tensors with the ggml type each gets in one file type."""

    ftype: str
    tensors: tuple[PlacedTensor, ...]
    imatrix: bool
    plain_bytes: float  # norms, routers, biases (F32) and other 16-bit tensors
    notes: tuple[str, ...] = field(default=())

    @property
    def total_bytes(self) -> float:
        return sum(t.bytes for t in self.tensors) + self.plain_bytes

    def bytes_where(self, *, category: str | None = None, expert: bool | None = None,
                    layer: int | None = None) -> float:
        return sum(t.bytes for t in self.tensors
                   if (category is None or t.tensor.category == category)
                   and (expert is None or t.tensor.expert == expert)
                   and (layer is None or t.tensor.layer == layer))

    def bytes_by_type(self) -> dict[str, int]:
        out: dict[str, float] = {}
        for t in self.tensors:
            out[t.type] = out.get(t.type, 0.0) + t.bytes
        return {k: int(v) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}

    def expert_bytes_by_layer(self, num_layers: int) -> tuple[int, ...]:
        per = [0.0] * num_layers
        for t in self.tensors:
            if t.tensor.expert and t.tensor.layer is not None:
                per[t.tensor.layer] += t.bytes
        return tuple(int(b) for b in per)

    def layer_bytes(self, num_layers: int) -> tuple[int, ...]:
        """Quantized bytes of each layer's tensors other than its routed experts."""
        per = [0.0] * num_layers
        for t in self.tensors:
            if not t.tensor.expert and t.tensor.layer is not None:
                per[t.tensor.layer] += t.bytes
        return tuple(int(b) for b in per)

    def mix(self) -> str:
        """'Q4_K 71%, Q6_K 26%, ...' by bytes."""
        types = self.bytes_by_type()
        total = sum(types.values()) or 1
        return ", ".join(f"{k} {v / total:.0%}" for k, v in list(types.items())[:4])


# ------------------------------------------------------------------ tensors of a model

_ATTN: dict[str, Category] = {
         "q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
         "out_proj": "attn_output", "dense": "attn_output", "qkv_proj": "attn_qkv",
         "c_attn": "attn_qkv", "query_key_value": "attn_qkv", "Wqkv": "attn_qkv",
         "W_pack": "attn_qkv", "kv_b_proj": "attn_kv_b"}
_FFN: dict[str, Category] = {
        "gate_proj": "ffn_gate", "w1": "ffn_gate", "up_proj": "ffn_up", "w3": "ffn_up",
        "c_fc": "ffn_up", "fc1": "ffn_up", "dense_h_to_4h": "ffn_up", "gate_up_proj": "ffn_up",
        "down_proj": "ffn_down", "w2": "ffn_down", "fc2": "ffn_down",
        "dense_4h_to_h": "ffn_down"}
# MLA projections llama.cpp names attn_q_a, attn_q_b, attn_kv_a_mqa: no rule touches them
_OTHER_PARTS = {"q_a_proj": "attn_q_a", "q_b_proj": "attn_q_b",
                "kv_a_proj_with_mqa": "attn_kv_a_mqa"}


def _category(g: LinearGroup, model: ModelSpec, seen_c_proj: bool) -> tuple[Category, str]:
    if g.name == "c_proj":  # GPT-2: the attention output first, then the MLP's down projection
        return ("ffn_down", "ffn_down") if seen_c_proj or g.in_features != model.hidden_size \
            else ("attn_output", "attn_output")
    if g.name in _ATTN:
        cat = _ATTN[g.name]
        return cat, cat
    if g.name in _FFN:
        cat = _FFN[g.name]
        return cat, cat
    return "other", _OTHER_PARTS.get(g.name, g.name)


def _moe_layers(model: ModelSpec) -> list[int]:
    n = model.num_layers
    if model.moe is None:
        return []
    flagged = [i for i, layer in enumerate(model.layers) if layer.moe]
    if len(flagged) == (model.moe.moe_layers or len(flagged)) and flagged:
        return flagged
    first = model.moe.dense_layers or max(0, n - (model.moe.moe_layers or n))
    return list(range(first, n))


def tensors_of(model: ModelSpec) -> list[GGUFTensor]:
    """The model's quantizable tensors, layer by layer, named as llama.cpp's converter does."""
    n = model.num_layers
    moe = _moe_layers(model)
    dense = [i for i in range(n) if i not in set(moe)]
    out: list[GGUFTensor] = []
    p = model.params
    if p.embedding:
        token = model.vocab_size * model.hidden_size
        if model.architecture.startswith("gemma3n") and token and p.embedding > token:
            # Gemma 3n: the per-layer input table is its own input tensor (a lookup, kept on
            # the CPU like token_embd; published files store it Q6_K like the tied token_embd)
            out.append(GGUFTensor("token_embd", "token_embd", None, token, model.hidden_size))
            out.append(GGUFTensor("per_layer_token_embd", "token_embd", None,
                                  p.embedding - token, model.hidden_size))
        else:
            out.append(GGUFTensor("token_embd", "token_embd", None, p.embedding,
                                  model.hidden_size))
    seen_c_proj = False
    for g in model.linears:
        cat, part = _category(g, model, seen_c_proj)
        seen_c_proj = seen_c_proj or g.name == "c_proj"
        if g.expert and moe:
            per_layer = g.count // len(moe)
            halves: list[tuple[Category, float]] = [("ffn_gate", 0.5), ("ffn_up", 0.5)] \
                if g.name == "gate_up_proj" \
                else [(cat, 1.0)]
            for i in moe:
                for c, share in halves:
                    out.append(GGUFTensor(f"blk.{i}.{c}_exps", c, i,
                                          int(g.in_features * g.out_features * per_layer * share),
                                          g.in_features, expert=True))
            continue
        if g.count == n or not model.moe:
            layers = list(range(min(g.count, n))) if g.count <= n else list(range(n))
            shared = False
        elif g.count == len(moe):
            layers, shared = moe, True
        elif g.count == len(dense):
            layers, shared = dense, False
        else:
            layers, shared = list(range(min(g.count, n))), False
        per = g.count // max(len(layers), 1)
        for i in layers:
            name = f"blk.{i}.{part}" + ("_shexp" if shared else "")
            out.append(GGUFTensor(name, cat, i, g.in_features * g.out_features * per,
                                  g.in_features, shared=shared))
    if p.lm_head:
        out.append(GGUFTensor("output", "output", None, p.lm_head, model.hidden_size))
    return out


# ------------------------------------------------------------------ the rules

def _use_more_bits(i: int, n: int) -> bool:
    """llama-quant.cpp use_more_bits: the first and last eighth, and every third layer."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


@dataclass
class _State:
    ftype: str
    arch: str
    n_layer: int
    n_expert: int
    gqa: float
    is_70b: bool
    tied: bool
    imatrix: bool
    n_attn_v: int
    i_attn_v: int = 0
    i_ffn_down: int = 0


def _type_for(t: GGUFTensor, s: _State) -> str:
    f, cat = s.ftype, t.category
    default = FTYPES[f]
    falcon = s.arch == "falcon"
    if cat == "output" or (s.tied and cat == "token_embd"):
        if f == "mxfp4_moe" or falcon or t.ncols % ggml_type(default).block:
            return "Q8_0"
        if f in _LOW_IQ or f == "iq3_xxs":
            return "Q5_K"
        return "Q6_K" if default != "Q8_0" else default
    if f == "mxfp4_moe":
        return "MXFP4" if t.expert else "Q8_0"
    if cat == "token_embd":
        if f in ("iq2_xxs", "iq2_xs", "iq1_s", "iq1_m"):
            return "Q2_K"
        if f in ("iq2_s", "iq2_m", "iq3_xxs"):
            return "IQ3_S"
        if f in ("tq1_0", "tq2_0"):
            return "Q4_K"
        return default
    new = default
    if f in _LOW_IQ:
        iq2sm = f in ("iq2_s", "iq2_m")
        if cat in _ATTN_V_LIKE:
            new = "Q4_K" if s.gqa >= 4 or s.n_expert >= 4 else ("IQ3_S" if iq2sm else "Q2_K")
            s.i_attn_v += 1
        elif s.n_expert == 8 and cat == "attn_k":
            new = "Q4_K"
        elif cat == "ffn_down":
            if s.i_ffn_down < s.n_layer // 8:
                new = "IQ3_S" if iq2sm else "Q2_K"
            s.i_ffn_down += 1
        elif cat == "attn_output":
            if s.n_expert == 8:
                new = "Q5_K"
            elif f in ("iq1_s", "iq1_m"):
                new = "IQ2_XXS"
            elif iq2sm:
                new = "IQ3_S"
        return new
    i = t.layer if t.layer is not None else 0
    n = s.n_layer
    if cat in _ATTN_V_LIKE:
        new = _attn_v(f, s, default)
        if s.is_70b and new in ("Q3_K", "Q4_K"):
            new = "Q5_K"  # 8 heads share attn_v in the 70B model: more bits cost little
        if s.n_expert == 8:
            new = "Q8_0"
        s.i_attn_v += 1
    elif cat == "attn_k":
        if s.n_expert == 8:
            new = "Q8_0"
        elif f == "iq3_xs":
            new = "IQ3_XXS"
        elif f == "iq3_xxs":
            new = "IQ2_S"
    elif cat == "attn_q":
        if f == "iq3_xs":
            new = "IQ3_XXS"
        elif f == "iq3_xxs":
            new = "IQ2_S"
    elif cat == "ffn_down":
        new = _ffn_down(f, s, default, i, n, falcon)
    elif cat == "attn_output":
        if not falcon:
            if s.n_expert == 8:
                if f in ("q2_k", "iq3_xs", "iq3_xxs", "q3_k_s", "q3_k_m", "iq4_nl", "q4_k_s",
                         "q4_k_m", "iq3_s", "iq3_m", "iq4_xs"):
                    new = "Q5_K"
            else:
                new = {"q2_k": "Q3_K", "iq3_xxs": "IQ3_S", "q3_k_m": "Q4_K",
                       "q3_k_l": "Q5_K", "iq3_m": "Q4_K"}.get(f, new)
        elif f == "q3_k_l":
            new = "Q4_K"
    elif cat == "attn_qkv":  # (reached only by formats the attn_v chain leaves alone)
        pass
    elif cat in ("ffn_gate", "ffn_up"):
        if f == "iq3_xs" and n // 8 <= i < 7 * n // 8:
            new = "IQ3_XXS"
    return new


def _attn_v(f: str, s: _State, new: str) -> str:
    gqa4 = s.gqa >= 4
    if f == "q2_k":
        return "Q4_K" if gqa4 else "Q3_K"
    if f == "q2_k_s" and gqa4:
        return "Q4_K"
    if f == "iq3_xxs":
        return "Q4_K" if gqa4 else ("IQ3_S" if not s.imatrix else "IQ3_XXS")
    if f in ("iq3_xs", "iq3_s") and gqa4:
        return "Q4_K"
    if f == "iq3_m":
        return "Q4_K"
    if f == "q3_k_m":
        return "Q5_K" if s.i_attn_v < 2 else "Q4_K"
    if f == "q3_k_l":
        return "Q5_K"
    if f in ("iq4_nl", "iq4_xs") and gqa4:
        return "Q5_K"
    if f in ("q4_k_m", "q5_k_m") and _use_more_bits(s.i_attn_v, s.n_attn_v):
        return "Q6_K"
    if f == "q4_k_s" and s.i_attn_v < 4:
        return "Q5_K"
    return new


def _ffn_down(f: str, s: _State, new: str, i: int, n: int, falcon: bool) -> str:
    if f == "q2_k":
        return "Q3_K"
    if f == "q2_k_s":
        return "Q4_K" if i < n // 8 else new
    if f == "iq3_xxs" and not s.imatrix:
        return "Q4_K" if i < n // 8 else "Q3_K"
    if f == "q3_k_m":
        if i < n // 16:
            return "Q5_K"
        return "Q4_K" if not falcon or _use_more_bits(i, n) else "Q3_K"
    if f == "iq3_m" and (i < n // 8 or (s.n_expert == 8 and _use_more_bits(i, n))):
        return "Q4_K"
    if f == "q3_k_l":
        return "Q4_K" if falcon else "Q5_K"
    if f == "q4_k_m":
        if falcon:
            return "Q6_K" if i < n // 16 else "Q5_K" if _use_more_bits(i, n) else "Q4_K"
        return "Q6_K" if _use_more_bits(i, n) else new
    if i < n // 8 and f in ("iq4_nl", "iq4_xs") and not s.imatrix:
        return "Q5_K"
    if f == "q5_k_m" and _use_more_bits(i, n):
        return "Q6_K"
    if f == "q4_k_s" and not falcon and i < n // 8:
        return "Q5_K"
    if f in ("q4_0", "q5_0") and s.imatrix and i < n // 8:
        return "Q4_1" if f == "q4_0" else "Q5_1"
    return new


def _fallback(t: GGUFTensor, type_: str) -> str:
    if t.ncols % ggml_type(type_).block == 0:
        return type_
    alt = _FALLBACK.get(type_.upper())
    if alt is None or t.ncols % ggml_type(alt).block:
        return "F16"
    return alt


def _is_70b(model: ModelSpec) -> bool:
    """llama.cpp's LLM_TYPE_70B: Llama / Qwen2 with 80 layers and grouped-query attention
    (llama-model.cpp sets the type from the layer count)."""
    return (model.architecture in ("llama", "qwen2") and model.num_layers == 80
            and model.num_kv_heads < model.num_attention_heads)


def _state(model: ModelSpec, ftype: str, imatrix: bool, tensors: list[GGUFTensor]) -> _State:
    return _State(
        ftype=ftype, arch=model.architecture, n_layer=model.num_layers,
        n_expert=model.moe.num_experts if model.moe else 0,
        gqa=(model.num_attention_heads / model.num_kv_heads
             if model.num_kv_heads and model.mla is None else 1.0),
        is_70b=_is_70b(model), tied=not model.params.lm_head, imatrix=imatrix,
        n_attn_v=sum(1 for t in tensors if t.category in _ATTN_V_LIKE))


def recipe(model: ModelSpec, ftype: str, *, imatrix: bool | None = None) -> Recipe:
    """Every weight tensor of ``model`` with its ggml type in file type ``ftype``.

    ``imatrix``: whether an importance matrix was used (default: yes for the IQ file types,
    which llama-quantize refuses to make without one, and IQ3_XXS / IQ4 too, as their
    publishers make them; no for K and legacy types, where it changes only Q4_0 / Q5_0).
    Unsloth's dynamic MoE types (``ud-iq1_s`` ...) take the low-bit rules for the routed
    experts and Q4_K_M's for everything else, Q6_K for shared experts.
    """
    f = ftype.lower()
    if f not in FTYPES:
        raise KeyError(f"{ftype} is not a llama.cpp file type")
    if f in UNSLOTH_XL:  # sized as the base file type it declares (see UNSLOTH_XL)
        xl = recipe(model, UNSLOTH_XL[f], imatrix=True if imatrix is None else imatrix)
        note = (f"Unsloth Dynamic 2.0 {f.upper()}: tensor types chosen per model; sized as "
                f"{UNSLOTH_XL[f].upper()} (published files within -6 % to +8 % of it)")
        return Recipe(f, xl.tensors, xl.imatrix, xl.plain_bytes, xl.notes + (note,))
    dynamic = UNSLOTH_DYNAMIC.get(f)
    if dynamic and not model.is_moe:
        raise KeyError(f"{ftype} is Unsloth's dynamic quant of MoE models; {model.name} is "
                       "dense")
    base = dynamic or f
    if imatrix is None:
        imatrix = base in IMATRIX_REQUIRED or base.startswith("iq") or bool(dynamic)
    tensors = tensors_of(model)
    state = _state(model, base, imatrix, tensors)
    rest = _state(model, "q4_k_m", imatrix, tensors) if dynamic else None
    placed = []
    fell_back = 0
    float_type = FTYPES[f] if ggml_type(FTYPES[f]).family == "float" else None
    # a checkpoint shipped with MXFP4 experts (gpt-oss) keeps them MXFP4 in every GGUF file
    # type: the converter writes the checkpoint's own blocks and the published K-quant and F16
    # files leave them ("All quants keep the feed forward networks at mxfp4",
    # https://huggingface.co/bartowski/openai_gpt-oss-20b-GGUF, llama.cpp b6096; Unsloth's
    # gpt-oss-20b Q4_K_M is 11.6 GB, against 12.1 GB for MXFP4_MOE)
    keep_mxfp4 = model.quantization == "mxfp4" and f != "mxfp4_moe"
    kept = 0
    for t in _in_file_order(tensors):
        if keep_mxfp4 and t.expert:
            if rest is None:
                _type_for(t, state)  # keeps the rules' layer counters in file order
            placed.append(PlacedTensor(t, "MXFP4"))
            kept += 1
            continue
        if rest is not None:
            down = UNSLOTH_DOWN.get(f)
            first = state.i_ffn_down < state.n_layer // 8  # llama-quant's ffn_down counter
            low = _type_for(t, state)  # keeps the low-bit rules' counters in file order
            if not t.expert:
                wanted = "Q6_K" if t.shared else _type_for(t, rest)
            elif down and t.category == "ffn_down":
                wanted = down[0] if first else down[1]
            else:
                wanted = low
        else:
            wanted = float_type or _type_for(t, state)
        chosen = _fallback(t, wanted)
        fell_back += chosen != wanted
        placed.append(PlacedTensor(t, chosen))
    p = model.params
    biases = sum(g.bias_params for g in model.linears)
    # a vision or audio tower is not in the model's GGUF: converters write it to its own
    # projector file (mmproj), loaded only with --mmproj
    plain = (p.norms + p.router + biases) * 4 + max(p.other - model.vision_params, 0) * 2
    notes = []
    if model.vision_params:
        notes.append(msg("recipe.towers", "the {params:,} parameters of the vision/audio tower "
                         "are not in this file (llama.cpp reads them from a separate mmproj "
                         "file, loaded only with --mmproj)", params=model.vision_params))
    if dynamic:
        notes.append(msg("recipe.unsloth", "Unsloth dynamic: routed experts at {base}'s rules, "
                         "the rest Q4_K_M's, shared experts Q6_K", base=base.upper()))
    if kept:
        notes.append(msg("recipe.mxfp4_kept", "{n} expert tensor(s) kept in the checkpoint's "
                         "MXFP4, as published GGUFs of this model keep them", n=kept))
    if fell_back:
        notes.append(msg("recipe.fallback", "{n} tensor(s) whose rows the block size does not "
                         "divide take llama.cpp's fallback type", n=fell_back))
    return Recipe(f, tuple(placed), imatrix, plain, tuple(notes))


def _in_file_order(tensors: list[GGUFTensor]) -> Iterator[GGUFTensor]:
    """Layer by layer (the counters llama-quantize keeps, such as attn_v's, follow it)."""
    def key(t: GGUFTensor) -> tuple[int, int]:
        if t.layer is None:
            return (-1 if t.category == "token_embd" else 1 << 30, 0)
        return (t.layer, 0)

    yield from sorted(tensors, key=key)
