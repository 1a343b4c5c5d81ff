"""config.json → ModelSpec, one parser per ``model_type``.

Parameter counts are exact sums over the tensors transformers creates for that
architecture (weights, biases, norms, embeddings), so they match a checkpoint's safetensors
total. What the usual rules of thumb get wrong is handled explicitly: grouped-query attention
(``num_key_value_heads``), an explicit ``head_dim`` that is not hidden/heads (Gemma, Qwen3),
tied embeddings (no separate LM head), MoE total vs active parameters (shared experts and
leading dense layers included), MLA projections (DeepSeek, Kimi K2) and DeepSeek-V3.2's
indexer, per-layer sliding windows (Mistral, Gemma 2/3, gpt-oss, Phi-3), Llama 4's chunked and
no-RoPE layers, and the constant per-sequence state of Gated DeltaNet and Mamba-2 layers
(Qwen3-Next, Qwen3.5, Granite 4, Nemotron-H).

Multimodal wrappers (``text_config`` / ``language_config``) are unwrapped: the text model is
parsed by its own parser and the vision tower counted from ``vision_config`` where its
architecture is modelled (SigLIP, Qwen3.5 ViT, Llama 4, Pixtral, MoonViT). A tower that is not
modelled is refused by name, never counted as 0. Multi-token-prediction layers are reported in
``ModelSpec.mtp_params``, outside the total (engines load them only to draft tokens).

``linears`` lists the projections a LoRA targets, by PEFT module name, with exact shapes;
MoE routers are not in it (they are counted in ``params.router``) and neither is the LM head.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from whichgpu.errors import DataError, InputError
from whichgpu.models.arch import vision as arch_vision
from whichgpu.models.arch.build import Arch
from whichgpu.models.arch.classic import falcon, gpt2, gpt_neox, mpt
from whichgpu.models.arch.deepseek import deepseek
from whichgpu.models.arch.gemma3n import gemma3n_text, mobilenet_vision, usm_audio
from whichgpu.models.arch.hybrid import gated_deltanet, granite_hybrid, nemotron_h
from whichgpu.models.arch.llama import STYLES, llama_like
from whichgpu.models.arch.moe import ernie45_moe, glm4_moe, hunyuan_moe, llama4_text, minimax_m2
from whichgpu.models.bounds import check_config, check_spec
from whichgpu.models.config_fields import ConfigReader
from whichgpu.models.rough_size import rough_size_hint
from whichgpu.models.spec import ModelSpec, ParamCounts

_DTYPES = {
    "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "float32": "fp32", "fp32": "fp32", "float": "fp32", "float8_e4m3fn": "fp8", "fp8": "fp8",
}

Parser = Callable[[ConfigReader, str], Arch]

# text decoders, by the model_type of their own config (or of a wrapper's text_config)
_TEXT: dict[str, Parser] = {
    **{mt: llama_like for mt in STYLES},
    "qwen3_next": gated_deltanet,
    "qwen3_5_text": gated_deltanet,
    "qwen3_5_moe_text": gated_deltanet,
    "deepseek_v2": deepseek,
    "deepseek_v3": deepseek,
    "deepseek_v32": deepseek,
    "kimi_k2": deepseek,
    "glm4_moe": glm4_moe,
    "minimax_m2": minimax_m2,
    "ernie4_5_moe": ernie45_moe,
    "hunyuan_v1_moe": hunyuan_moe,
    "gemma3n_text": gemma3n_text,
    "llama4_text": llama4_text,
    "granitemoehybrid": granite_hybrid,
    "nemotron_h": nemotron_h,
    "gpt2": gpt2,
    "gpt_neox": gpt_neox,
    "falcon": falcon,
    "mpt": mpt,
}
_ALIASES = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}


# ---------------------------------------------------------------------------- wrappers

Tower = Callable[[ConfigReader, ConfigReader, Arch], tuple[int, str]]


def _siglip(v: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    return arch_vision.siglip(v, arch.hidden)


def _qwen35_vit(v: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    return arch_vision.qwen35(v, arch.hidden)


def _llama4_vision(v: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    return arch_vision.llama4(v, arch.hidden)


def _pixtral(v: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    layer = top.raw("vision_feature_layer", -1)
    feature_layers = len(layer) if isinstance(layer, list) else 1
    return arch_vision.pixtral(v, arch.hidden,
                               top.int("spatial_merge_size", default=2, limit="hidden"),
                               top.bool("multimodal_projector_bias", default=False),
                               feature_layers)


def _moonvit(v: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    return arch_vision.moonvit(v, arch.hidden)


def _gemma3n_towers(v: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    """Gemma 3n: the MobileNet-V5 vision encoder; its audio tower is added by the wrapper."""
    return mobilenet_vision(v, arch.hidden), "the MobileNet-V5 vision encoder and embedder"


def _gemma3n_audio(a: ConfigReader, top: ConfigReader, arch: Arch) -> tuple[int, str]:
    return usm_audio(a, arch.hidden), "the USM conformer audio encoder and embedder"


@dataclass(frozen=True)
class _Wrapper:
    """A multimodal model_type: where its text model is and which tower it has."""

    text_types: tuple[str, ...]  # accepted model_types of text_config (first: the default)
    tower: Tower | None
    name: str  # the architecture recorded in the spec
    audio: Tower | None = None  # an audio tower counted from ``audio_config`` (Gemma 3n)


_WRAPPERS: dict[str, _Wrapper] = {
    "gemma3": _Wrapper(("gemma3_text",), _siglip, "gemma3"),
    "qwen3_5": _Wrapper(("qwen3_5_text",), _qwen35_vit, "qwen3_5"),
    "qwen3_5_moe": _Wrapper(("qwen3_5_moe_text",), _qwen35_vit, "qwen3_5_moe"),
    "llama4": _Wrapper(("llama4_text",), _llama4_vision, "llama4"),
    "mistral3": _Wrapper(("mistral", "llama"), _pixtral, "mistral3"),
    "kimi_k25": _Wrapper(("kimi_k2", "deepseek_v3"), _moonvit, "kimi_k25"),
    "gemma3n": _Wrapper(("gemma3n_text",), _gemma3n_towers, "gemma3n", audio=_gemma3n_audio),
}
_TOWER_KEYS = ("vision_config", "audio_config", "vision_tower", "visual", "speech_config")

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted({*_TEXT, *_WRAPPERS}))


# top-level fields a wrapper's text model inherits when its own config leaves them out
# (Qwen3.5 keeps tie_word_embeddings at the top level)
_INHERITED = ("tie_word_embeddings", "torch_dtype", "dtype")


def _text_reader(r: ConfigReader) -> ConfigReader | None:
    for key in ("text_config", "language_config", "llm_config"):
        inner = r.data.get(key)
        if isinstance(inner, Mapping):
            data = {k: r.data[k] for k in _INHERITED if r.data.get(k) is not None}
            data.update(inner)
            return ConfigReader(data, r.origin, f"{r.prefix}{key}.")
    return None


def _parse_wrapper(r: ConfigReader, mt: str, w: _Wrapper) -> Arch:
    t = _text_reader(r)
    if t is None:
        # a text-only checkpoint saved under the wrapper's model_type (Gemma 3 1B)
        return _TEXT[w.text_types[0]](r, w.text_types[0])
    inner = str(t.raw("model_type", w.text_types[0])).lower()
    if inner not in w.text_types:
        inner = w.text_types[0] if inner in (mt, "") else inner
    if inner not in _TEXT:
        raise InputError(f"{r.origin}: model_type {mt!r} wraps a text model of type {inner!r}, "
                         "which is not supported")
    arch = _TEXT[inner](t, inner)
    if w.tower and r.has("vision_config"):
        params, what = w.tower(r.sub("vision_config"), r, arch)
        arch.add_vision(params, what)
    if w.audio and r.has("audio_config"):
        params, what = w.audio(r.sub("audio_config"), r, arch)
        arch.add_vision(params, what, per="audio clip")
    arch.architecture = w.name
    return arch


def _parse_unknown_wrapper(r: ConfigReader, mt: str) -> Arch | None:
    """A model_type we do not know whose text model we do: unwrapped when it has no other
    tower; refused, naming the tower, when it has one."""
    t = _text_reader(r)
    if t is None:
        return None
    inner = str(t.raw("model_type", "")).lower()
    if inner not in _TEXT:
        return None
    towers = [k for k in _TOWER_KEYS if r.has(k)]
    if towers:
        what = ", ".join(f"{k} ({r.data[k].get('model_type', 'unknown type')})"
                         if isinstance(r.data[k], Mapping) else k for k in towers)
        text = _TEXT[inner](t, inner)
        total = sum(text.b.counts.values())
        raise InputError(
            f"{r.origin}: model_type {mt!r} wraps a supported {inner!r} text model "
            f"({total / 1e9:.2f}B parameters) but its {what} is not modelled here, so its "
            "weights would be missing; give the text model's own config.json, or a size such "
            f"as '{_size_label(total)}' plus the tower")
    arch = _TEXT[inner](t, inner)
    arch.notes.append(f"the text model ({inner}) of a {mt!r} wrapper")
    return arch


def _size_label(n: float) -> str:
    from whichgpu.units import format_count

    return format_count(n).replace(" ", "")


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
    if key in _WRAPPERS:
        arch = _parse_wrapper(r, key, _WRAPPERS[key])
    elif key in _TEXT:
        arch = _TEXT[key](r, key)
    else:
        found = _parse_unknown_wrapper(r, key)
        if found is None:
            raise InputError(
                f"{origin}: model_type {mt!r} is not supported; supported model types: "
                f"{', '.join(SUPPORTED_MODEL_TYPES)}. {rough_size_hint(data)}")
        arch = found
    c = arch.b.counts
    total = sum(c.values())
    active = total - arch.vision_params
    if arch.moe and c["experts"]:
        m = arch.moe
        active -= c["experts"] - c["experts"] * m.experts_per_token // m.num_experts
    params = ParamCounts(active=active, **c)
    dtype = _native_dtype(r)
    notes = list(arch.notes)
    if arch.tied:
        notes.append("the LM head is tied to the token embedding (no separate lm_head)")
    text = _text_reader(r)
    qc = r.raw("quantization_config") or (text.raw("quantization_config") if text else None)
    quant = quantization_of(qc)
    if quant == "int4-g32" and isinstance(qc, Mapping) and qc.get("ignore"):
        notes.append("the checkpoint stores the routed experts in INT4 (compressed-tensors, "
                     "groups of 32); the modules in its ignore list stay 16-bit")
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
        notes=tuple(notes), mtp_params=arch.mtp_params, vision_params=arch.vision_params), origin)


def _native_dtype(r: ConfigReader) -> str | None:
    raw = r.raw("torch_dtype") or r.raw("dtype")
    t = _text_reader(r)
    if raw is None and t is not None:
        raw = t.raw("torch_dtype") or t.raw("dtype")
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
    if method == "compressed-tensors":
        return _compressed_tensors_format(qc)
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


def _compressed_tensors_format(qc: Mapping) -> str:
    """compressed-tensors weight schemes: INT4 in groups of 32 (Kimi K2 Thinking, K2.5) maps to
    ``int4-g32``; other schemes keep the method's name."""
    groups = qc.get("config_groups")
    if isinstance(groups, Mapping):
        for g in groups.values():
            w = g.get("weights") if isinstance(g, Mapping) else None
            if isinstance(w, Mapping) and w.get("num_bits") == 4 and w.get("type") == "int":
                return "int4-g32" if w.get("group_size") == 32 else "int4"
    return "compressed-tensors"


def _display_name(data: Mapping, hub_id: str | None, origin: str) -> str:
    if hub_id:
        return hub_id.split("/")[-1]
    name = data.get("_name_or_path") if isinstance(data, Mapping) else None
    if isinstance(name, str) and name:
        return name.rstrip("/").split("/")[-1]
    return origin
