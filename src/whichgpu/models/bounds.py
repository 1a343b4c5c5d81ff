"""Plausible bounds on a model's shape: past them a config, a GGUF file or a checkpoint header
is broken (or built to make the server work), not a model.

Every bound is several times what the largest public model has, so no real 2026 model is
refused; each says which model that is, and the refusal says both. The estimates walk the
layers and the GPU configurations, so without these bounds a 769-byte config with 100,000
layers cost seconds of CPU per request.

``check_config`` reads the usual config.json keys before any parser runs (so the error names
the file's own field); ``check_spec`` checks the ModelSpec any builder produced (presets,
config.json, GGUF, diffusers pipelines, bare sizes), whatever the field was called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from whichgpu.errors import DataError
from whichgpu.messages import Message, msg
from whichgpu.models.spec import ModelSpec

#: what a config pasted on the web is called in messages (there is no file)
PASTED = msg("origin.pasted", "pasted config.json")


@dataclass(frozen=True)
class Bound:
    """The largest plausible value of one dimension and the real model that argues for it."""

    what: Message  # how the message names it: "layers", "hidden size"
    limit: int
    largest: Message  # the largest real value and its model, as the message says it
    source: str  # where that value is written


# Each limit is 8x-100x the largest real value, rounded to a power of two (or ten).
BOUNDS: dict[str, Bound] = {
    "layers": Bound(msg("dim.layers", "layers"), 1024, msg(
        "dim.layers.largest", "the deepest public model, Llama 3.1 405B, has 126"),
                    "presets/llama-3.1-405b/config.json: num_hidden_layers"),
    "hidden": Bound(msg("dim.hidden", "hidden size"), 131_072, msg(
        "dim.hidden.largest", "the widest, Llama 3.1 405B, has 16,384"),
                    "presets/llama-3.1-405b/config.json: hidden_size"),
    "heads": Bound(msg("dim.heads", "attention heads"), 1024, msg(
        "dim.heads.largest", "Llama 3.1 405B and DeepSeek-V3 have 128"),
                   "presets/llama-3.1-405b and presets/deepseek-v3: num_attention_heads"),
    "head_dim": Bound(msg("dim.head_dim", "head dimension"), 4096, msg(
        "dim.head_dim.largest", "the largest in common use is 256"),
                      "presets/gemma-2-9b/config.json: head_dim 256; DeepSeek-V3's MLA keys "
                      "are 192 (qk_nope_head_dim 128 + qk_rope_head_dim 64)"),
    "intermediate": Bound(msg("dim.intermediate", "MLP intermediate size"), 524_288, msg(
        "dim.intermediate.largest", "Llama 3.1 405B has 53,248"),
                          "presets/llama-3.1-405b/config.json: intermediate_size"),
    "experts": Bound(msg("dim.experts", "experts"), 8192, msg(
        "dim.experts.largest", "Qwen3-Next has 512, Kimi K2 384"),
                     "Qwen/Qwen3-Next-80B-A3B-Instruct config.json: num_experts 512; "
                     "moonshotai/Kimi-K2-Instruct config.json: n_routed_experts 384"),
    "vocab": Bound(msg("dim.vocab", "vocabulary size"), 4_194_304, msg(
        "dim.vocab.largest", "Gemma 3 has 262,208 tokens"),
                   "transformers' Gemma3TextConfig default vocab_size 262208, which "
                   "google/gemma-3-27b-it keeps; Qwen3.5 has 248,320"),
    "context": Bound(msg("dim.context", "context length"), 1 << 30, msg(
        "dim.context.largest", "the longest, Llama 4 Scout, has 10,485,760 tokens"),
        "meta-llama/Llama-4-Scout-17B-16E config.json: text_config.max_position_embeddings"),
    "params": Bound(msg("dim.params", "parameters"), 10**14, msg(
        "dim.params.largest", "the largest open models have about 10^12"),
                    "moonshotai/Kimi-K2-Instruct model card: 1.04T total parameters"),
    "tensors": Bound(msg("dim.tensors", "tensors"), 1_000_000, msg(
        "dim.tensors.largest", "DeepSeek-V3's checkpoint has about 90,000"),
                     "58 MoE layers x 256 experts x 3 projections, a weight and a scale each "
                     "(presets/deepseek-v3/config.json)"),
}

# config.json keys (any architecture, top level or a nested text/LLM config) -> bound.
CONFIG_KEYS: dict[str, str] = {
    **dict.fromkeys(("num_hidden_layers", "n_layer", "n_layers", "num_layers",
                     "num_decoder_layers"), "layers"),
    **dict.fromkeys(("hidden_size", "n_embd", "d_model"), "hidden"),
    **dict.fromkeys(("num_attention_heads", "n_head", "n_heads", "num_key_value_heads",
                     "n_head_kv", "num_kv_heads"), "heads"),
    **dict.fromkeys(("head_dim", "kv_channels"), "head_dim"),
    **dict.fromkeys(("intermediate_size", "n_inner", "ffn_hidden_size", "d_ff",
                     "moe_intermediate_size", "shared_expert_intermediate_size"),
                    "intermediate"),
    **dict.fromkeys(("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts",
                     "n_shared_experts", "num_experts_per_tok"), "experts"),
    **dict.fromkeys(("vocab_size", "padded_vocab_size"), "vocab"),
    **dict.fromkeys(("max_position_embeddings", "n_positions", "max_seq_len",
                     "max_sequence_length", "seq_length"), "context"),
}


def refusal(kind: str, value: int) -> Message:
    """'100,000 layers is not a plausible value (at most 1,024; the deepest ... has 126)'."""
    b = BOUNDS[kind]
    return msg("bounds.refusal", "{value:,} {what} is not a plausible value (at most {limit:,}; "
               "{largest})", value=value, what=b.what, limit=b.limit, largest=b.largest)


def check_value(kind: str, value: int, origin: str, field: str | None = None) -> None:
    """A DataError naming ``origin`` (and ``field``) when ``value`` passes its bound."""
    if value > BOUNDS[kind].limit:
        raise DataError(origin, refusal(kind, value), field=field)


def check_config(data: Any, origin: str, _prefix: str = "", _depth: int = 0) -> None:
    """Refuse a config.json whose dimensions no model has, before a parser builds anything.

    Looks at the keys in ``CONFIG_KEYS`` at the top level and in nested objects (text_config,
    llm_config, ...) down to three levels; values that are not numbers are left to the parser.
    """
    if not isinstance(data, Mapping) or _depth > 3:
        return
    for key, value in data.items():
        if isinstance(value, Mapping):
            check_config(value, origin, f"{_prefix}{key}.", _depth + 1)
            continue
        kind = CONFIG_KEYS.get(key) if isinstance(key, str) else None
        if kind is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if value == value and value > BOUNDS[kind].limit:  # NaN: the parser says why
            shown = int(value) if value < 1e300 else value
            raise DataError(origin, refusal(kind, shown) if isinstance(shown, int) else
                            msg("bounds.refusal.float", "{value!r} {what} is not a plausible "
                                "value", value=value, what=BOUNDS[kind].what),
                            field=_prefix + key)


def check_spec(spec: ModelSpec, origin: str | None = None) -> ModelSpec:
    """``spec`` unchanged, or a DataError for the first dimension past its bound."""
    where = origin or spec.source or spec.id
    dims = (("layers", spec.num_layers), ("layers", len(spec.layers)),
            ("hidden", spec.hidden_size), ("heads", spec.num_attention_heads),
            ("heads", spec.num_kv_heads), ("head_dim", spec.head_dim),
            ("intermediate", spec.intermediate_size), ("vocab", spec.vocab_size),
            ("context", spec.max_context), ("params", spec.params_total))
    for kind, value in dims:
        check_value(kind, value, where)
    for layer in spec.layers[:BOUNDS["layers"].limit]:
        if layer.window is not None and layer.window > BOUNDS["context"].limit:
            check_value("context", layer.window, where, "sliding_window")
    if spec.moe is not None:
        check_value("experts", spec.moe.num_experts, where)
        if spec.moe.experts_per_token > spec.moe.num_experts:
            raise DataError(where, f"{spec.moe.experts_per_token} experts per token but only "
                            f"{spec.moe.num_experts} experts")
    if spec.checkpoint is not None:
        check_value("tensors", spec.checkpoint.tensor_count, where)
    if spec.diffusion is not None:
        for c in spec.diffusion.components:
            for kind, value in (("layers", c.num_layers), ("hidden", c.hidden_size),
                                ("heads", c.num_heads), ("params", c.params),
                                ("context", c.max_tokens)):
                check_value(kind, value, where, c.name)
    return spec
