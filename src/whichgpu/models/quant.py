"""Weight quantization formats as data (``data/quant_formats.toml``), with their sources.

A format says how many bits each kind of tensor takes, scales and zeros included, and what
precision the matmuls run in. ``exl2-<bpw>`` (e.g. ``exl2-4.0``) is parametric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from whichgpu.errors import InputError, NotFoundError
from whichgpu.messages import DataText, Message, data_text, msg

Compute = str  # "bf16", "fp16", "fp32", "fp8", "int8", "fp4" or "weight-only"


@dataclass(frozen=True)
class QuantFormat:
    name: str
    description: str
    linear_bits: float
    embedding_bits: float
    lm_head_bits: float
    compute: Compute
    source: str
    expert_only: bool = False
    whole_model_bpw: float | None = None
    aliases: tuple[str, ...] = ()
    # Bits of norm weights and MoE routers; None: the checkpoint's own 16/32-bit dtype
    # (GGUF keeps both in F32: convert_hf_to_gguf.py writes 1-D tensors and ffn_gate_inp as F32)
    norm_bits: float | None = None
    router_bits: float | None = None

    @property
    def weight_only(self) -> bool:
        """Weights are dequantized to 16-bit for the matmul (bytes shrink, compute does not)."""
        return self.compute == "weight-only"

    @property
    def is_16bit(self) -> bool:
        return self.linear_bits == 16

    def compute_precision(self, native: str = "bf16") -> str:
        """The GPU precision key the matmuls need with this format's own kernels."""
        if self.weight_only:
            return native
        return self.compute

    @property
    def said(self) -> Message | DataText:
        """The description as the engine says it: a message for a parametric format, else
        the data file's string (translated whole)."""
        d = self.description
        return d if isinstance(d, Message) else data_text(d)

    def to_json(self) -> dict:
        return {"name": self.name, "description": self.description,
                "linear_bits": self.linear_bits, "embedding_bits": self.embedding_bits,
                "lm_head_bits": self.lm_head_bits, "compute": self.compute,
                "expert_only": self.expert_only, "norm_bits": self.norm_bits,
                "router_bits": self.router_bits, "source": self.source}


@cache
def _table() -> tuple[dict[str, QuantFormat], dict[str, str]]:
    from whichgpu.parse_cache import cached_toml

    data = cached_toml("whichgpu.models", "data/quant_formats.toml")
    formats: dict[str, QuantFormat] = {}
    for raw in data["format"]:
        raw = dict(raw)
        raw["aliases"] = tuple(raw.get("aliases", ()))
        q = QuantFormat(**raw)
        formats[q.name] = q
        for a in q.aliases:
            formats[a] = q
    return formats, data["sources"]


def quant_names() -> list[str]:
    """Canonical format names (aliases excluded), plus the parametric ``exl2-<bpw>`` and
    group-size variants of GPTQ and AWQ."""
    formats, _ = _table()
    return sorted({q.name for q in formats.values()}) + ["exl2-<bpw>", "gptq-g<N>",
                                                           "gptq-int8-g<N>", "awq-g<N>"]


_GROUPED = re.compile(r"(gptq|awq)(?:-(int4|4bit|int8|8bit))?-g(\d+)")


def _grouped(key: str) -> QuantFormat | None:
    """GPTQ / AWQ at a group size: ``gptq-g32``, ``gptq-int8-g64``, ``awq-g64``.

    Bits per weight = b + (16-bit scale + b-bit zero point) / group, as the packed layouts
    store them (qweight, fp16 scales and b-bit qzeros per group and output column); GPTQ's
    int32 g_idx adds 32 / out_features bits, under 0.01 for a 4,096-wide layer, left out.
    """
    m = _GROUPED.fullmatch(key)
    if not m:
        return None
    method, width, group = m.group(1), m.group(2) or "int4", int(m.group(3))
    bits = 8 if width.startswith(("int8", "8")) else 4
    if method == "awq" and bits != 4:
        raise InputError(msg("quant.awq_bits", "AWQ is 4-bit only; use awq-g<N> or "
                             "gptq-int8-g<N>"))
    if group not in (16, 32, 64, 128, 256, 512, 1024):
        raise InputError(msg("quant.group", "group size must be a power of two from 16 to 1024, "
                             "got {v}", v=group))
    linear = bits + (16 + bits) / group
    name = f"{method}{'-int8' if bits == 8 else ''}-g{group}"
    return QuantFormat(
        name=name, description=msg("quant.grouped", "{method} {bits}-bit, group size {group}: "
                                   "{bits} + (16 scale + {bits} zero)/{group} = {linear:.4g} "
                                   "bits per weight", method=method.upper(), bits=bits,
                                   group=group, linear=linear),
        linear_bits=linear, embedding_bits=16, lm_head_bits=16, compute="weight-only",
        source=method)


def quant_source_url(key: str) -> str:
    return _table()[1].get(key, key)


def get_quant(name: str) -> QuantFormat:
    """A format by its command-line name, case-insensitive: 'bf16', 'Q4_K_M', 'awq', 'exl2-4.0'."""
    key = str(name).strip().lower().replace(" ", "")
    formats, _ = _table()
    if key in formats:
        return formats[key]
    grouped = _grouped(key)
    if grouped is not None:
        return grouped
    m = re.fullmatch(r"exl2[-_]?(\d+(?:\.\d+)?)(?:bpw)?", key)
    if m:
        bpw = float(m.group(1))
        if not 1.5 <= bpw <= 8.5:
            raise InputError(msg("quant.exl2_bits", "EXL2 bits per weight must be between 1.5 "
                                 "and 8.5, got {v}", v=str(bpw)))
        return QuantFormat(
            name=f"exl2-{bpw:g}", description=msg(
                "quant.exl2", "EXL2 at {bpw:g} bits per weight (average, scales included); "
                "lm_head at 6 bits; exllamav2 keeps the embedding in system RAM", bpw=bpw),
            linear_bits=bpw, embedding_bits=0.0, lm_head_bits=6.0, compute="weight-only",
            source="exl2")
    if key.startswith("exl3"):
        from whichgpu.engines import not_modelled

        known = not_modelled("exllamav3")
        why = data_text(known.why) if known is not None else ""
        raise InputError(msg("quant.exl3", "EXL3 (exllamav3) is not modelled: {why}; whichgpu "
                             "does not answer with EXL2's numbers", why=why))
    raise NotFoundError("quantization format", name, quant_names(), hint=_generic(key))


def _generic(key: str) -> Message | str:
    """A family word ('4bit', 'gguf') said as the formats it stands for, or ''."""
    if re.fullmatch(r"(int|q)?4(-?bits?)?|int4|4b", key):
        return msg("quant.generic.4bit", "4-bit formats: awq or gptq (vLLM, SGLang), q4_k_m "
                   "(GGUF, llama.cpp), nf4 (bitsandbytes, QLoRA)")
    if re.fullmatch(r"(int|q)?8(-?bits?)?|8b", key):
        return msg("quant.generic.8bit", "8-bit formats: fp8 (H100 and newer), int8 "
                   "(bitsandbytes), q8_0 (GGUF, llama.cpp)")
    if key in ("gguf", "ggml", "llamacpp", "llama.cpp"):
        return msg("quant.generic.gguf", "GGUF formats: q4_k_m, q5_k_m, q6_k, q8_0 ...")
    return ""
