"""A local .gguf file → ModelSpec with exact bytes per tensor (llama.cpp's ``gguf`` package).

The architecture comes from the metadata (``general.architecture`` and the ``<arch>.*`` keys
llama.cpp writes: block_count, embedding_length, attention.head_count(_kv), ...); parameter
counts and bytes come from the tensor table, so k-quant mixes, unquantized embeddings and
heads are exact. Only the header and tensor table are read (memory-mapped), not the weights.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from whichgpu.errors import DataError
from whichgpu.models.spec import (
    CheckpointInfo,
    LayerSpec,
    LinearGroup,
    ModelSpec,
    MoESpec,
    ParamCounts,
)

# GGUF tensor name (blk.N.<part>.weight) → PEFT module name
_LINEAR_NAMES = {
    "attn_q": "q_proj", "attn_k": "k_proj", "attn_v": "v_proj", "attn_output": "o_proj",
    "attn_qkv": "qkv_proj", "ffn_gate": "gate_proj", "ffn_up": "up_proj",
    "ffn_down": "down_proj", "attn_q_a": "q_a_proj", "attn_q_b": "q_b_proj",
    "attn_kv_a_mqa": "kv_a_proj_with_mqa", "attn_kv_b": "kv_b_proj",
    "ffn_gate_exps": "gate_proj", "ffn_up_exps": "up_proj", "ffn_down_exps": "down_proj",
    "ffn_gate_shexp": "gate_proj", "ffn_up_shexp": "up_proj", "ffn_down_shexp": "down_proj",
}
_BLOCK = re.compile(r"^blk\.(\d+)\.(.+?)(?:\.weight|\.bias)?$")


def _field(reader: Any, key: str, default: Any = None) -> Any:
    f = reader.fields.get(key)
    if f is None:
        return default
    try:
        return f.contents()
    except Exception:  # a field of an unexpected shape: treat as absent
        return default


def _part(name: str) -> str:
    m = _BLOCK.match(name)
    return m.group(2) if m else name.removesuffix(".weight").removesuffix(".bias")


def _category(part: str, name: str) -> str:
    if name.startswith("token_embd") or name.startswith("position_embd"):
        return "embedding"
    if name.startswith("output.") or name == "output":
        return "lm_head"
    if "norm" in part:
        return "norms"
    if part.startswith("ffn_gate_inp"):
        return "router"
    if part.endswith("_exps") or ".exp_probs_b" in name or part.startswith("exp_probs"):
        return "experts" if part.endswith("_exps") else "router"
    if part.endswith("_shexp") or part.startswith("ffn_gate_inp_shexp"):
        return "shared_experts"
    if part.startswith("ffn"):
        return "mlp"
    if part.startswith("attn"):
        return "attention"
    return "other"


def _per_layer(value: Any, n: int, default: int) -> list[int]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        vals = [int(v) for v in value]
        return vals if len(vals) == n else [vals[0] if vals else default] * n
    return [int(value) if value is not None else default] * n


def spec_from_gguf(path: Path) -> ModelSpec:
    """Read a .gguf file's metadata and tensor table into a ModelSpec."""
    try:
        from gguf import GGUFReader, LlamaFileType
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise DataError(path, "reading GGUF needs the 'gguf' package: pip install gguf") from exc
    try:
        reader = GGUFReader(str(path), "r")
    except Exception as exc:  # gguf raises ValueError, struct.error, IndexError ... on bad files
        raise DataError(path, f"not a readable GGUF file: {exc}") from exc

    arch = _field(reader, "general.architecture")
    if not isinstance(arch, str) or not arch:
        raise DataError(path, "required metadata key is missing", field="general.architecture")

    def need(key: str) -> int:
        v = _field(reader, f"{arch}.{key}")
        if isinstance(v, Sequence) and not isinstance(v, str) and v:
            v = max(v)
        if not isinstance(v, int) or v <= 0:
            raise DataError(path, "required metadata key is missing or not a positive integer",
                            field=f"{arch}.{key}")
        return v

    n = need("block_count")
    h = need("embedding_length")
    a = need("attention.head_count")
    kv_raw = _field(reader, f"{arch}.attention.head_count_kv", a)
    kv_layers = _per_layer(kv_raw, n, a)
    d = int(_field(reader, f"{arch}.attention.key_length", h // a) or h // a)
    dv = int(_field(reader, f"{arch}.attention.value_length", d) or d)
    ff = _field(reader, f"{arch}.feed_forward_length", 0)
    inter = int(max(ff) if isinstance(ff, Sequence) and ff else ff or 0)
    ctx = int(_field(reader, f"{arch}.context_length", 0) or 0)
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    vocab = int(_field(reader, f"{arch}.vocab_size", 0) or (len(tokens.data) if tokens else 0))
    experts = int(_field(reader, f"{arch}.expert_count", 0) or 0)
    used = int(_field(reader, f"{arch}.expert_used_count", 0) or 0)
    shared = int(_field(reader, f"{arch}.expert_shared_count", 0) or 0)
    window = _field(reader, f"{arch}.attention.sliding_window")

    counts = dict.fromkeys(("embedding", "attention", "mlp", "experts", "shared_experts",
                            "router", "lm_head", "norms", "other"), 0)
    bytes_by: dict[str, int] = {}
    params_by: dict[str, int] = {}
    groups: dict[tuple[str, int, int, bool], int] = {}
    embed_b = head_b = 0
    moe_blocks: set[int] = set()
    for t in reader.tensors:
        n_el = int(t.n_elements)
        tname = t.tensor_type.name
        bytes_by[tname] = bytes_by.get(tname, 0) + int(t.n_bytes)
        params_by[tname] = params_by.get(tname, 0) + n_el
        part = _part(t.name)
        cat = _category(part, t.name)
        counts[cat] += n_el
        if cat == "embedding" and t.name.startswith("token_embd"):
            embed_b += int(t.n_bytes)
        elif cat == "lm_head":
            head_b += int(t.n_bytes)
        m = _BLOCK.match(t.name)
        if m and cat == "experts":
            moe_blocks.add(int(m.group(1)))
        if m and t.name.endswith(".weight") and part in _LINEAR_NAMES:
            shape = [int(x) for x in t.shape]
            fin, fout = shape[0], shape[1] if len(shape) > 1 else 1
            copies = shape[2] if len(shape) > 2 else 1
            key = (_LINEAR_NAMES[part], fin, fout, cat == "experts")
            groups[key] = groups.get(key, 0) + copies
    tied = counts["lm_head"] == 0
    total = sum(counts.values())
    active = total
    if experts and used and counts["experts"]:
        active = total - counts["experts"] + counts["experts"] * used // experts
    linears = tuple(LinearGroup(name, fin, fout, c, expert=exp)
                    for (name, fin, fout, exp), c in groups.items())

    kinds = _sliding(reader, arch, n, window)
    layers = tuple(LayerSpec(attention=kinds[i], window=window if kinds[i] == "sliding" else None,
                             kv_heads=kv_layers[i], head_dim=d, v_head_dim=dv,
                             moe=i in moe_blocks) for i in range(n))
    moe = None
    if experts:
        moe = MoESpec(num_experts=experts, experts_per_token=used, num_shared_experts=shared,
                      expert_intermediate_size=int(_field(
                          reader, f"{arch}.expert_feed_forward_length", 0) or 0),
                      moe_layers=len(moe_blocks), dense_layers=n - len(moe_blocks))
    ftype = _field(reader, "general.file_type")
    quant = None
    native = "fp16"
    if isinstance(ftype, int):
        try:
            fname = LlamaFileType(ftype).name.removeprefix("MOSTLY_").lower()
        except ValueError:
            fname = None
        if fname in ("all_f32", "f32"):
            native = "fp32"
        elif fname == "bf16":
            native = "bf16"
        elif fname and fname != "f16":
            quant = fname
    ckpt = CheckpointInfo(total_bytes=sum(bytes_by.values()), bytes_by_dtype=bytes_by,
                          params_by_dtype=params_by, tensor_count=len(reader.tensors),
                          embedding_bytes=embed_b, lm_head_bytes=head_b,
                          source=f"gguf:{path}",
                          quant_types=tuple(sorted(bytes_by)))
    name = _field(reader, "general.name") or path.stem
    notes = [f"exact bytes from the GGUF tensor table ({len(reader.tensors)} tensors: "
             f"{', '.join(sorted(bytes_by))})"]
    if tied:
        notes.append("no output.weight tensor: the LM head is tied to the token embedding")
    return ModelSpec(
        id=str(path), name=str(name), family="decoder", architecture=arch,
        source=f"gguf:{path}", params=ParamCounts(active=active, **counts), num_layers=n,
        hidden_size=h, num_attention_heads=a, num_kv_heads=max(kv_layers), head_dim=d,
        intermediate_size=inter, vocab_size=vocab, tie_word_embeddings=tied, max_context=ctx,
        gated_mlp=any(g.name == "gate_proj" for g in linears), layers=layers,
        linears=linears, moe=moe, native_dtype=native, quantization=quant, checkpoint=ckpt,
        notes=tuple(notes))


def _sliding(reader: Any, arch: str, n: int, window: Any) -> list[str]:
    if not isinstance(window, int) or window <= 0:
        return ["full"] * n
    pattern = _field(reader, f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, Sequence) and len(pattern) == n:
        return ["sliding" if bool(p) else "full" for p in pattern]
    if isinstance(pattern, int) and pattern > 0:
        return ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(n)]
    if arch == "gemma2":
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if arch == "gemma3":
        return ["full" if (i + 1) % 6 == 0 else "sliding" for i in range(n)]
    return ["sliding"] * n
