"""Issue 21, item 12 (and 3 for the CLI): checkpoint metadata is checked, not trusted.

GGUF and safetensors headers are read within the file's own size and validated: no negative
shapes, no zero heads, no 4e9 layers, no count that exceeds what the file could hold. Every
ModelSpec, however it was built, passes the plausibility bounds of models/bounds.py.
"""

from __future__ import annotations

import json
import struct
import time
import tracemalloc
from importlib import resources
from pathlib import Path

import gguf
import numpy as np
import pytest

from whichgpu.errors import DataError, InputError
from whichgpu.models import resolve_model

PRESETS = resources.files("whichgpu.models").joinpath("presets")


# ------------------------------------------------------------------ GGUF

def crafted_gguf(path: Path, element_type: int = 0, count: int = 2**60) -> Path:
    """52 bytes: a GGUF header with one metadata array that claims ``count`` elements."""
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"a"
    head += struct.pack("<IIQ", 9, element_type, count)
    path.write_bytes(head + b"\0" * (52 - len(head)))
    assert path.stat().st_size == 52
    return path


@pytest.mark.parametrize("element_type", [0, 4, 8, 9])  # u8, u32, string, array
def test_a_crafted_52_byte_gguf_is_refused_at_once_without_allocating(tmp_path, element_type):
    """Before: gguf-py allocated from the count (2^60 u8 elements): +200 MB/s until a
    MemoryError or a segfault. Now the count is checked against the bytes left."""
    path = crafted_gguf(tmp_path / "crafted.gguf", element_type)
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(DataError, match="cannot fit"):
            resolve_model(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 1.0
    assert peak < 5 * 2**20


def write_gguf(path: Path, *, layers: int = 2, kv: int | list[int] = 2, heads: int = 4,
               tensors: bool = True) -> Path:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(layers)
    w.add_context_length(256)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(heads)
    if isinstance(kv, list):
        w.add_key_value("llama.attention.head_count_kv", kv, gguf.GGUFValueType.ARRAY)
    else:
        w.add_head_count_kv(kv)
    w.add_token_list([f"t{i}" for i in range(16)])
    if tensors:
        w.add_tensor("token_embd.weight", np.zeros((16, 64), dtype=np.float16))
        for i in range(min(layers, 2)):
            w.add_tensor(f"blk.{i}.attn_q.weight", np.zeros((64, 64), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_a_well_formed_gguf_still_reads(tmp_path):
    spec = resolve_model(str(write_gguf(tmp_path / "ok.gguf")))
    assert spec.num_layers == 2 and spec.num_kv_heads == 2
    assert spec.checkpoint.total_bytes == (16 * 64 + 2 * 64 * 64) * 2


def test_a_gguf_with_no_kv_heads_is_refused(tmp_path):
    with pytest.raises(DataError, match="no KV heads"):
        resolve_model(str(write_gguf(tmp_path / "zero.gguf", kv=0)))
    with pytest.raises(DataError, match="1 of 2 layers have no KV heads"):
        resolve_model(str(write_gguf(tmp_path / "hybrid.gguf", kv=[2, 0])))


def test_a_gguf_with_4e9_layers_is_refused_before_building_them(tmp_path):
    start = time.monotonic()
    with pytest.raises(DataError, match="4,000,000,000 layers is not a plausible value"):
        resolve_model(str(write_gguf(tmp_path / "deep.gguf", layers=4_000_000_000)))
    assert time.monotonic() - start < 1.0


def test_kv_heads_must_divide_the_heads(tmp_path):
    with pytest.raises(DataError, match="cannot be shared by 3 KV heads"):
        resolve_model(str(write_gguf(tmp_path / "odd.gguf", kv=3)))


def test_a_tensor_past_the_end_of_the_file_is_refused(tmp_path):
    """A tensor table that claims more data than the file holds (a 70B model in a few KB)."""
    path = write_gguf(tmp_path / "cut.gguf")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 4096])
    with pytest.raises(DataError, match="lies outside the file"):
        resolve_model(str(path))


def test_a_gguf_with_an_unknown_tensor_type_is_refused(tmp_path):
    path = write_gguf(tmp_path / "type.gguf")
    data = bytearray(path.read_bytes())
    name = b"token_embd.weight"
    at = data.index(name) + len(name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    struct.pack_into("<I", data, at + 4 + 8 * n_dims, 999)  # the tensor's type
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="unknown type 999"):
        resolve_model(str(path))


def test_a_truncated_or_foreign_file_is_a_data_error(tmp_path):
    for content in (b"", b"GGUF", b"GGUF" + b"\xff" * 40, b"not a gguf file at all" * 3):
        path = tmp_path / "bad.gguf"
        path.write_bytes(content)
        with pytest.raises(DataError, match=r"bad\.gguf"):
            resolve_model(str(path))


# ------------------------------------------------------------------ safetensors

def write_safetensors(folder: Path, header: dict, data_bytes: int) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(
        PRESETS.joinpath("qwen2.5-0.5b", "config.json").read_text("utf-8"))
    raw = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw +
                                               b"\0" * data_bytes)
    return folder


def test_a_negative_safetensors_shape_is_refused(tmp_path):
    """Before: shape [-5] gave negative bytes (an 8B model at 2.9 GB)."""
    folder = write_safetensors(tmp_path / "neg", {
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [-5, 896],
                                      "data_offsets": [0, 0]}}, 0)
    with pytest.raises(DataError, match="non-negative integers"):
        resolve_model(str(folder))


@pytest.mark.parametrize("shape", [[1.5, 2], [True, 2], ["4", 2], [2] * 9, [10**8, 10**8]])
def test_a_safetensors_shape_that_no_tensor_has_is_refused(tmp_path, shape):
    folder = write_safetensors(tmp_path / "shape", {
        "w": {"dtype": "F16", "shape": shape, "data_offsets": [0, 8]}}, 8)
    with pytest.raises(DataError, match="shape"):
        resolve_model(str(folder))


def test_safetensors_data_must_lie_inside_the_file(tmp_path):
    folder = write_safetensors(tmp_path / "short", {
        "w": {"dtype": "F16", "shape": [1024, 1024], "data_offsets": [0, 2 * 1024 * 1024]}},
        1024)
    with pytest.raises(DataError, match="past the file"):
        resolve_model(str(folder))
    folder = write_safetensors(tmp_path / "lies", {
        "w": {"dtype": "F16", "shape": [4, 4], "data_offsets": [0, 8]}}, 8)
    with pytest.raises(DataError, match="8 bytes of data for a F16 tensor"):
        resolve_model(str(folder))


def test_an_unknown_safetensors_dtype_is_refused(tmp_path):
    folder = write_safetensors(tmp_path / "dtype", {
        "w": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 4]}}, 4)
    with pytest.raises(DataError, match="unknown dtype"):
        resolve_model(str(folder))


def test_a_safetensors_header_longer_than_the_file_is_refused(tmp_path):
    folder = tmp_path / "hdr"
    write_safetensors(folder, {}, 0)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", 10**6) + b"{}")
    with pytest.raises(DataError, match="not plausible"):
        resolve_model(str(folder))


def test_hub_safetensors_metadata_with_a_negative_shape_gives_no_bytes(monkeypatch):
    """Headers from the Hub are checked the same way; a bad one leaves the config's estimate
    (with a note) instead of negative bytes."""
    from whichgpu.models import hub

    monkeypatch.setattr(hub, "_shard_files", lambda repo, offline: None)
    monkeypatch.setattr(hub, "_file_headers",
                        lambda repo, files: [("model.embed_tokens.weight", "BF16", [-5, 896])])
    monkeypatch.setattr(hub, "hub_offline", lambda offline=None: False)
    ckpt, note = hub.safetensors_checkpoint("acme/negative")
    assert ckpt is None and "non-negative integers" in note


# ------------------------------------------------------------------ local files

def test_model_paths_must_be_regular_files(tmp_path):
    """A FIFO hung the CLI; /dev/zero grew it without end; both are refused unread."""
    import os
    import threading

    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def resolve():
        try:
            resolve_model(str(fifo))
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=resolve, daemon=True)
    t.start()
    t.join(3.0)
    assert not t.is_alive(), "reading the FIFO blocked"
    assert isinstance(outcome[0], InputError) and "FIFO" in str(outcome[0])
    with pytest.raises(InputError, match="character device"):
        resolve_model("/dev/zero")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "folder" / "config.json")
    with pytest.raises(InputError, match=r"no config\.json"):
        resolve_model(str(tmp_path / "folder"))


def test_a_huge_config_file_is_refused_unread(tmp_path):
    path = tmp_path / "config.json"
    with path.open("wb") as f:
        f.truncate(64 * 2**20)
    with pytest.raises(DataError, match="too large"):
        resolve_model(str(path))


@pytest.mark.parametrize("text,words", [
    ("[" * 100_000 + "]" * 100_000, "nested"),
    ('{"a": ' + "[" * 40 + "]" * 40 + "}", "nested"),
    ('{"num_hidden_layers": NaN}', "not a JSON number"),
    ('{"num_hidden_layers": ' + "9" * 5000 + "}", "invalid JSON"),
])
def test_config_json_is_parsed_strictly(tmp_path, text, words):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(DataError, match=words):
        resolve_model(str(path))


def test_a_model_name_the_file_system_cannot_take_is_an_unknown_model():
    with pytest.raises(InputError, match="unknown model"):
        resolve_model("é" * 200)
    with pytest.raises(InputError, match="not a model name"):
        resolve_model("x" * 5000)
