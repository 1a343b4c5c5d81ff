"""A local .gguf file → ModelSpec with exact bytes per tensor (llama.cpp's ``gguf`` package).

The architecture comes from the metadata (``general.architecture`` and the ``<arch>.*`` keys
llama.cpp writes: block_count, embedding_length, attention.head_count(_kv), ...); parameter
counts and bytes come from the tensor table, so k-quant mixes, unquantized embeddings and
heads are exact. Only the header and tensor table are read (memory-mapped), not the weights,
by a reader of our own that checks every count against the bytes of the file before using it
(gguf-py's reader allocates from counts it never checks: a 52-byte file made it grow without
end).
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import Any

from whichgpu.errors import DataError
from whichgpu.models.bounds import check_spec
from whichgpu.models.spec import (
    AttentionKind,
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


class _Array:
    """A long metadata array kept by its length only (tokenizer tokens, merges, scores)."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count


# GGUF value types (gguf-py GGUFValueType): struct format of each scalar
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
            12: "d"}
_STRING, _ARRAY = 8, 9
KEEP_ARRAY = 65_536  # arrays up to this long are kept (per-layer values); longer: the count
MAX_KEY_BYTES = 65_535
MAX_DIMS = 4  # GGML_MAX_DIMS


class GGUFHeader:
    """The metadata and tensor table of a GGUF file, read and checked against the file itself
    (pure Python over a memory map; nothing is allocated from a count before the bytes that
    count promises are known to be there).

    Every count must fit in the bytes left, every string and tensor must lie inside the file,
    tensor types must be known and their data must fit in the data section: a 52-byte file
    that claims 2^60 array elements is refused at once, without allocating anything.
    """

    pos: int  # the offset of the next read
    order: str  # struct's byte order: "<" or ">"

    def __init__(self, path: Path) -> None:
        import mmap

        from whichgpu.models.local_file import open_regular

        self.path = path
        fd = open_regular(path)
        try:
            size = os.fstat(fd).st_size
            if size < 24:
                raise DataError(path, f"{size} bytes: too short to be a GGUF file")
            self.buf = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        try:
            self._read()
        finally:
            self.buf.close()

    # -------------------------------------------------------------- primitives
    def _fail(self, problem: str) -> DataError:
        return DataError(self.path, f"not a valid GGUF file: {problem}")

    def _take(self, n: int) -> int:
        """The offset of the next ``n`` bytes (which must be in the file)."""
        at = self.pos
        if n < 0 or at + n > len(self.buf):
            raise self._fail(f"needs {n:,} bytes at offset {at:,}, the file has "
                             f"{len(self.buf):,}")
        self.pos = at + n
        return at

    def _unpack(self, fmt: str) -> Any:
        size = struct.calcsize(self.order + fmt)
        return struct.unpack_from(self.order + fmt, self.buf, self._take(size))[0]

    def _count(self, what: str, each: int) -> int:
        """A u64 count of items of at least ``each`` bytes, which must fit in what is left."""
        n = self._unpack("Q")
        left = len(self.buf) - self.pos
        if n * each > left:
            raise self._fail(f"{what}: {n:,} items of at least {each} bytes cannot fit in the "
                             f"{left:,} bytes left")
        return n

    def _string(self, limit: int) -> str:
        n = self._count("string", 1)
        if n > limit:
            raise self._fail(f"a string of {n:,} bytes (at most {limit:,})")
        at = self._take(n)
        try:
            return bytes(self.buf[at:at + n]).decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail(f"a string at offset {at:,} is not UTF-8") from None

    def _value(self, vtype: int, depth: int = 0) -> Any:
        if vtype in _SCALARS:
            return self._unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self._string(len(self.buf))
        if vtype != _ARRAY:
            raise self._fail(f"unknown metadata value type {vtype}")
        if depth >= 2:
            raise self._fail("arrays nested more than two deep")
        etype = self._unpack("I")
        each = (struct.calcsize(_SCALARS[etype]) if etype in _SCALARS else
                8 if etype == _STRING else 12 if etype == _ARRAY else 0)
        if not each:
            raise self._fail(f"unknown array element type {etype}")
        n = self._count("array", each)
        if etype in _SCALARS and n > KEEP_ARRAY:  # skip the bytes, keep the length
            self._take(n * each)
            return _Array(n)
        if etype in _SCALARS:
            fmt = self.order + f"{n}{_SCALARS[etype]}"
            return list(struct.unpack_from(fmt, self.buf, self._take(struct.calcsize(fmt))))
        if n > KEEP_ARRAY and etype == _STRING:  # tokenizer tokens, merges: lengths only
            fmt = self.order + "Q"
            for _ in range(n):
                (length,) = struct.unpack_from(fmt, self.buf, self._take(8))
                self._take(length)
            return _Array(n)
        if n > KEEP_ARRAY:
            for _ in range(n):
                self._value(etype, depth + 1)
            return _Array(n)
        return [self._value(etype, depth + 1) for _ in range(n)]

    # -------------------------------------------------------------- the file
    def _read(self) -> None:
        from whichgpu.models.bounds import BOUNDS

        if bytes(self.buf[:4]) != b"GGUF":
            raise self._fail("no GGUF magic at the start")
        self.order, self.pos = "<", 4
        version = self._unpack("I")
        if version & 0xFFFF == 0:  # written for the other byte order
            self.order, self.pos = ">", 4
            version = self._unpack("I")
        if version not in (2, 3):
            raise self._fail(f"version {version} (versions 2 and 3 are read)")
        n_tensors = self._count("tensor count", 24)
        if n_tensors > BOUNDS["tensors"].limit:
            raise self._fail(f"{n_tensors:,} tensors (at most {BOUNDS['tensors'].limit:,})")
        n_kv = self._count("metadata count", 13)
        self.fields: dict[str, Any] = {}
        for _ in range(n_kv):
            key = self._string(MAX_KEY_BYTES)
            self.fields[key] = self._value(self._unpack("I"))
        self.tensors: list[tuple[str, Any, list[int], int, int, int]] = []
        if n_tensors:  # ggml's tensor types (gguf-py imports numpy: only for a real table)
            from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
        names: set[str] = set()
        for _ in range(n_tensors):
            name = self._string(MAX_KEY_BYTES)
            if name in names:
                raise self._fail(f"tensor {name!r} appears twice")
            names.add(name)
            n_dims = self._unpack("I")
            if not 1 <= n_dims <= MAX_DIMS:
                raise self._fail(f"tensor {name!r} has {n_dims} dimensions (1 to {MAX_DIMS})")
            dims = [self._unpack("Q") for _ in range(n_dims)]
            raw_type = self._unpack("I")
            offset = self._unpack("Q")
            try:
                ttype = GGMLQuantizationType(raw_type)
                block, type_size = GGML_QUANT_SIZES[ttype]
            except (ValueError, KeyError):
                raise self._fail(f"tensor {name!r} has unknown type {raw_type}") from None
            n = 1
            for d in dims:
                n *= d
            if n > 10**14 or dims[0] % block:
                raise self._fail(f"tensor {name!r} has shape {dims} ({n:,} elements)")
            self.tensors.append((name, ttype, dims, n, n * type_size // block, offset))
        align = self.fields.get("general.alignment", 32)
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            raise self._fail(f"general.alignment {align!r} is not a power of two")
        start = -(-self.pos // align) * align
        data = len(self.buf) - start
        for name, _, _, _, n_bytes, offset in self.tensors:
            if offset % align or offset + n_bytes > data:
                raise self._fail(f"tensor {name!r} ({n_bytes:,} bytes at offset {offset:,}) "
                                 f"lies outside the file's {max(data, 0):,} bytes of data")


def _field(reader: GGUFHeader, key: str, default: Any = None) -> Any:
    value = reader.fields.get(key)
    return default if value is None else value


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
    if isinstance(value, list):
        vals = [int(v) for v in value]
        return vals if len(vals) == n else [vals[0] if vals else default] * n
    return [int(value) if isinstance(value, int) else default] * n


def spec_from_gguf(path: Path) -> ModelSpec:
    """Read a .gguf file's metadata and tensor table into a ModelSpec (checked: see
    :class:`GGUFHeader` for the file, ``models.bounds`` for the dimensions)."""
    from whichgpu.models.bounds import check_value

    reader = GGUFHeader(path)
    arch = _field(reader, "general.architecture")
    if not isinstance(arch, str) or not arch:
        raise DataError(path, "required metadata key is missing", field="general.architecture")

    def num(key: str, default: Any = None, *, kind: str | None = None, lo: int = 0) -> Any:
        """An integer metadata value (the largest of a per-layer array), within its bound."""
        v = _field(reader, f"{arch}.{key}", default)
        if isinstance(v, list) and v:
            v = max(v)
        if v is None:
            return v
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise DataError(path, f"must be an integer of at least {lo}, got {v!r:.40}",
                            field=f"{arch}.{key}")
        if kind is not None:
            check_value(kind, v, str(path), f"{arch}.{key}")
        return v

    def need(key: str, kind: str) -> int:
        v = num(key, kind=kind)
        if v is None or v <= 0:
            raise DataError(path, "required metadata key is missing or not a positive integer",
                            field=f"{arch}.{key}")
        return v

    n = need("block_count", "layers")
    h = need("embedding_length", "hidden")
    a = need("attention.head_count", "heads")
    kv_raw = _field(reader, f"{arch}.attention.head_count_kv", a)
    num("attention.head_count_kv", kind="heads")
    kv_layers = _per_layer(kv_raw, n, a)
    if min(kv_layers) <= 0:
        zero = sum(1 for k in kv_layers if k <= 0)
        raise DataError(path, f"{zero} of {n} layers have no KV heads: recurrent / SSM layers "
                        "are not modelled for GGUF files (their state memory would be wrong), "
                        "and a model with no KV heads at all is not a model",
                        field=f"{arch}.attention.head_count_kv")
    if any(a % k for k in kv_layers):
        raise DataError(path, f"{a} attention heads cannot be shared by "
                        f"{next(k for k in kv_layers if a % k)} KV heads",
                        field=f"{arch}.attention.head_count_kv")
    d = num("attention.key_length", kind="head_dim", lo=1) or h // a
    dv = num("attention.value_length", kind="head_dim", lo=1) or d
    if d <= 0:
        raise DataError(path, f"embedding_length {h} over {a} heads leaves no head dimension",
                        field=f"{arch}.attention.key_length")
    inter = num("feed_forward_length", 0, kind="intermediate") or 0
    ctx = num("context_length", 0, kind="context") or 0
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    vocab = num("vocab_size", 0, kind="vocab") or (len(tokens) if isinstance(
        tokens, list | _Array) else 0)
    check_value("vocab", vocab, str(path), "tokenizer.ggml.tokens")
    experts = num("expert_count", 0, kind="experts") or 0
    used = num("expert_used_count", 0, kind="experts") or 0
    shared = num("expert_shared_count", 0, kind="experts") or 0
    if used > experts:
        raise DataError(path, f"{used} experts per token but only {experts} experts",
                        field=f"{arch}.expert_used_count")
    window = _field(reader, f"{arch}.attention.sliding_window")
    if isinstance(window, int) and not isinstance(window, bool):
        check_value("context", window, str(path), f"{arch}.attention.sliding_window")

    counts = dict.fromkeys(("embedding", "attention", "mlp", "experts", "shared_experts",
                            "router", "lm_head", "norms", "other"), 0)
    bytes_by: dict[str, int] = {}
    params_by: dict[str, int] = {}
    groups: dict[tuple[str, int, int, bool], int] = {}
    embed_b = head_b = 0
    moe_blocks: set[int] = set()
    for tensor_name, ttype, shape, n_el, n_bytes, _ in reader.tensors:
        tname = ttype.name
        bytes_by[tname] = bytes_by.get(tname, 0) + n_bytes
        params_by[tname] = params_by.get(tname, 0) + n_el
        part = _part(tensor_name)
        cat = _category(part, tensor_name)
        counts[cat] += n_el
        if cat == "embedding" and tensor_name.startswith("token_embd"):
            embed_b += n_bytes
        elif cat == "lm_head":
            head_b += n_bytes
        m = _BLOCK.match(tensor_name)
        if m and cat == "experts":
            moe_blocks.add(int(m.group(1)))
        if m and tensor_name.endswith(".weight") and part in _LINEAR_NAMES:
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
                      expert_intermediate_size=num("expert_feed_forward_length", 0,
                                                   kind="intermediate") or 0,
                      moe_layers=len(moe_blocks), dense_layers=n - len(moe_blocks))
    ftype = _field(reader, "general.file_type")
    quant = None
    native = "fp16"
    if isinstance(ftype, int):
        from gguf import LlamaFileType

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
    name = _field(reader, "general.name")
    name = name if isinstance(name, str) and name else path.stem
    notes = [f"exact bytes from the GGUF tensor table ({len(reader.tensors)} tensors: "
             f"{', '.join(sorted(bytes_by))})"]
    if tied:
        notes.append("no output.weight tensor: the LM head is tied to the token embedding")
    return check_spec(ModelSpec(
        id=str(path), name=name[:200], family="decoder", architecture=arch,
        source=f"gguf:{path}", params=ParamCounts(active=active, **counts), num_layers=n,
        hidden_size=h, num_attention_heads=a, num_kv_heads=max(kv_layers), head_dim=d,
        intermediate_size=inter, vocab_size=vocab, tie_word_embeddings=tied, max_context=ctx,
        gated_mlp=any(g.name == "gate_proj" for g in linears), layers=layers,
        linears=linears, moe=moe, native_dtype=native, quantization=quant, checkpoint=ckpt,
        notes=tuple(notes)), str(path))


def _sliding(reader: Any, arch: str, n: int, window: Any) -> list[AttentionKind]:
    if not isinstance(window, int) or window <= 0:
        return ["full"] * n
    pattern = _field(reader, f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list) and len(pattern) == n:
        return ["sliding" if bool(p) else "full" for p in pattern]
    if isinstance(pattern, int) and pattern > 0:
        return ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(n)]
    if arch == "gemma2":
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if arch == "gemma3":
        return ["full" if (i + 1) % 6 == 0 else "sliding" for i in range(n)]
    return ["sliding"] * n
