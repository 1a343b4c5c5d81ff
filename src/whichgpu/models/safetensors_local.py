"""Exact checkpoint facts from safetensors headers (local files or Hub metadata).

A safetensors file starts with an 8-byte little-endian header length and a JSON header that
lists every tensor's dtype and shape, so sizes are known without reading any weights.
``params_by_dtype`` counts stored elements: for packed formats (gpt-oss MXFP4 blocks stored
as U8) an element is a byte, not a parameter.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable
from pathlib import Path

from whichgpu.errors import DataError
from whichgpu.models.spec import CheckpointInfo

# bytes per element of each safetensors dtype (safetensors spec, Dtype enum)
DTYPE_BYTES: dict[str, float] = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
    "U16": 2, "U32": 4, "U64": 8, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "F6_E2M3": 0.75, "F6_E3M2": 0.75, "F4": 0.5,
}
_EMBED = ("embed_tokens", "wte.", "word_embeddings", "embed_in", "tok_embeddings",
          "token_embd")
_HEAD = ("lm_head", "embed_out", "output.weight")
_MAX_HEADER = 100 * 2**20  # the safetensors library refuses headers over 100 MB


def checkpoint_from_tensors(tensors: Iterable[tuple[str, str, list[int]]],
                            source: str) -> CheckpointInfo:
    """CheckpointInfo from ``(name, dtype, shape)`` triples."""
    bytes_by: dict[str, int] = {}
    params_by: dict[str, int] = {}
    embed = head = count = 0
    for name, dtype, shape in tensors:
        n = math.prod(shape) if shape else 1
        size = int(n * DTYPE_BYTES.get(dtype.upper(), 2))
        key = dtype.upper()
        bytes_by[key] = bytes_by.get(key, 0) + size
        params_by[key] = params_by.get(key, 0) + n
        count += 1
        if any(k in name for k in _EMBED):
            embed += size
        elif any(name.startswith(k) or f".{k}" in name for k in _HEAD):
            head += size
    return CheckpointInfo(total_bytes=sum(bytes_by.values()), bytes_by_dtype=bytes_by,
                          params_by_dtype=params_by, tensor_count=count,
                          embedding_bytes=embed, lm_head_bytes=head, source=source)


def read_header(path: Path) -> dict:
    """The JSON header of one .safetensors file (nothing else is read)."""
    try:
        with path.open("rb") as f:
            raw = f.read(8)
            if len(raw) != 8:
                raise DataError(path, "too short to be a safetensors file")
            (length,) = struct.unpack("<Q", raw)
            if length > _MAX_HEADER:
                raise DataError(path, f"header length {length:,} bytes is not plausible")
            header = json.loads(f.read(length))
    except OSError as exc:
        raise DataError(path, f"cannot read: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(path, f"header is not valid JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise DataError(path, "header is not a JSON object")
    return header


def checkpoint_from_folder(folder: Path) -> CheckpointInfo | None:
    """Checkpoint facts from every ``*.safetensors`` file in a folder, or None if there is none."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    tensors = []
    for f in files:
        for name, info in read_header(f).items():
            if name == "__metadata__":
                continue
            if not isinstance(info, dict) or "dtype" not in info or "shape" not in info:
                raise DataError(f, "tensor entry without dtype and shape", field=name)
            tensors.append((name, str(info["dtype"]), list(info["shape"])))
    return checkpoint_from_tensors(tensors, f"safetensors:{folder}")
