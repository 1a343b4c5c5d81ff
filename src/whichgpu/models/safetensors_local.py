"""Exact checkpoint facts from safetensors headers (local files or Hub metadata).

A safetensors file starts with an 8-byte little-endian header length and a JSON header that
lists every tensor's dtype and shape, so sizes are known without reading any weights.
``params_by_dtype`` counts stored elements: for packed formats (gpt-oss MXFP4 blocks stored
as U8) an element is a byte, not a parameter.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Iterable
from pathlib import Path

from whichgpu.errors import DataError
from whichgpu.models.local_file import open_regular, parse_json
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


MAX_DIMS = 8  # the safetensors format allows any rank; real tensors have at most 5
MAX_ELEMENTS = 10**14  # one tensor of more elements than the largest model has parameters


def _checked_shape(shape: object, dtype: object, name: str, source: object) -> tuple[int, str]:
    """(elements, DTYPE) of one tensor entry, or a DataError saying what is wrong with it."""
    if not isinstance(dtype, str) or dtype.upper() not in DTYPE_BYTES:
        raise DataError(source, f"unknown dtype {dtype!r:.40}; known: "
                        f"{', '.join(DTYPE_BYTES)}", field=name)
    if not isinstance(shape, list | tuple) or len(shape) > MAX_DIMS or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise DataError(source, f"shape {shape!r:.60} is not a list of at most {MAX_DIMS} "
                        "non-negative integers", field=name)
    n = 1
    for d in shape:
        n *= d
        if n > MAX_ELEMENTS:
            raise DataError(source, f"shape {list(shape)!r:.60} has more elements than any "
                            f"model has parameters (at most {MAX_ELEMENTS:.0e})", field=name)
    return n, dtype.upper()


def tensor_bytes(n: int, dtype: str) -> int:
    """Bytes of ``n`` elements of a safetensors dtype (sub-byte types are packed)."""
    return math.ceil(n * DTYPE_BYTES[dtype])


def checkpoint_from_tensors(tensors: Iterable[tuple[str, str, list[int]]],
                            source: str) -> CheckpointInfo:
    """CheckpointInfo from ``(name, dtype, shape)`` triples; a negative or non-integer
    dimension, an unknown dtype or an absurd size is a DataError naming the tensor."""
    bytes_by: dict[str, int] = {}
    params_by: dict[str, int] = {}
    embed = head = count = 0
    for name, dtype, shape in tensors:
        n, key = _checked_shape(shape, dtype, str(name), source)
        size = tensor_bytes(n, key)
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
    """The JSON header of one .safetensors file (nothing else is read), checked against the
    file: every tensor's bytes must lie inside the data that follows the header."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        raw = f.read(8)
        if len(raw) != 8:
            raise DataError(path, "too short to be a safetensors file")
        (length,) = struct.unpack("<Q", raw)
        if length > _MAX_HEADER or length > size - 8:
            raise DataError(path, f"header length {length:,} bytes is not plausible "
                            f"(the file has {size:,} bytes)")
        text = f.read(length)
    header = parse_json(text, path)
    if not isinstance(header, dict):
        raise DataError(path, "header is not a JSON object")
    data_bytes = size - 8 - length
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or "dtype" not in info or "shape" not in info:
            raise DataError(path, "tensor entry without dtype and shape", field=name)
        n, dtype = _checked_shape(info["shape"], info["dtype"], name, path)
        offsets = info.get("data_offsets")
        if offsets is not None:
            if not (isinstance(offsets, list) and len(offsets) == 2 and all(
                    isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                    and 0 <= offsets[0] <= offsets[1]):
                raise DataError(path, f"data_offsets {offsets!r:.60} are not two increasing "
                                "non-negative integers", field=name)
            if offsets[1] > data_bytes:
                raise DataError(path, f"tensor data ends at byte {offsets[1]:,}, past the "
                                f"file's {data_bytes:,} bytes of data", field=name)
            if offsets[1] - offsets[0] != tensor_bytes(n, dtype):
                raise DataError(path, f"{offsets[1] - offsets[0]:,} bytes of data for a "
                                f"{dtype} tensor of shape {info['shape']} "
                                f"({tensor_bytes(n, dtype):,} bytes)", field=name)
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
            tensors.append((name, str(info["dtype"]), list(info["shape"])))
    return checkpoint_from_tensors(tensors, f"safetensors:{folder}")
