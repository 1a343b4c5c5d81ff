"""GGUF files written by the tests themselves (gguf.GGUFWriter), read back into a ModelSpec
with exact bytes per tensor type."""

from __future__ import annotations

import pytest

from gguf_files import FF, LAYERS, VOCAB, H, write_gguf
from whichgpu.errors import DataError
from whichgpu.models import resolve_model


def test_gguf_architecture_comes_from_the_metadata(tmp_path):
    spec = resolve_model(str(write_gguf(tmp_path / "tiny.gguf")))
    assert spec.architecture == "llama" and spec.name == "tiny-test"
    assert (spec.num_layers, spec.hidden_size, spec.num_attention_heads) == (LAYERS, H, 4)
    assert (spec.num_kv_heads, spec.head_dim, spec.intermediate_size) == (2, 16, FF)
    assert spec.vocab_size == VOCAB and spec.max_context == 256
    assert spec.quantization == "q8_0" and spec.tie_word_embeddings


def test_gguf_bytes_and_parameters_are_exact_per_tensor_type(tmp_path):
    spec = resolve_model(str(write_gguf(tmp_path / "tiny.gguf")))
    per_layer_q8 = H * H * 2 + 32 * H * 2 + 3 * FF * H
    ck = spec.checkpoint
    assert ck.bytes_by_dtype["F16"] == VOCAB * H * 2
    assert ck.bytes_by_dtype["Q8_0"] == LAYERS * per_layer_q8 // 32 * 34  # 34 bytes / 32
    assert ck.bytes_by_dtype["F32"] == (2 * LAYERS + 1) * H * 4
    assert set(ck.quant_types) == {"F16", "F32", "Q8_0"}
    assert ck.embedding_bytes == VOCAB * H * 2 and ck.lm_head_bytes == 0
    assert spec.params_total == VOCAB * H + LAYERS * (per_layer_q8 + 2 * H) + H
    q = next(g for g in spec.linears if g.name == "q_proj")
    k = next(g for g in spec.linears if g.name == "k_proj")
    assert (q.in_features, q.out_features, q.count) == (H, H, LAYERS)
    assert (k.in_features, k.out_features) == (H, 32)


def test_gguf_output_tensor_means_an_untied_head(tmp_path):
    spec = resolve_model(str(write_gguf(tmp_path / "head.gguf", head=True)))
    assert not spec.tie_word_embeddings and spec.params.lm_head == VOCAB * H
    assert spec.checkpoint.lm_head_bytes == VOCAB * H * 2


def test_gguf_moe_experts_and_active_parameters(tmp_path):
    spec = resolve_model(str(write_gguf(tmp_path / "moe.gguf", experts=4)))
    assert spec.moe.num_experts == 4 and spec.moe.moe_layers == LAYERS
    assert spec.params.experts == LAYERS * 4 * 3 * FF * H
    assert spec.params_total - spec.params_active == LAYERS * 2 * 3 * FF * H
    gate = next(g for g in spec.linears if g.name == "gate_proj")
    assert gate.expert and gate.count == LAYERS * 4


def test_broken_gguf_files_are_data_errors(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + bytes(20))
    with pytest.raises(DataError, match=r"junk\.gguf"):
        resolve_model(str(junk))
    missing = write_gguf(tmp_path / "nolayers.gguf", skip_key="block_count")
    with pytest.raises(DataError, match=r"llama\.block_count"):
        resolve_model(str(missing))


def test_cli_reads_a_gguf_file(tmp_path, cli):
    path = write_gguf(tmp_path / "tiny.gguf")
    r = cli("model", str(path), "--json")
    assert r.code == 0
    data = r.json()
    assert data["checkpoint"]["quant_types"] == ["F16", "F32", "Q8_0"]
    assert data["num_kv_heads"] == 2 and data["head_dim"] == 16
