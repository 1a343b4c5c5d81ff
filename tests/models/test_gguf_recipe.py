"""GGUF file sizes follow llama.cpp's own per-tensor quantization rules (llama-quant.cpp), for
dense and MoE models, instead of one bits-per-weight figure for a mixed recipe."""

from __future__ import annotations

import csv

import pytest

from paths import ROOT
from whichgpu.estimate.memory.weights import llm_weight_bytes
from whichgpu.models import resolve_model
from whichgpu.models.gguf_recipe import FTYPES, ggml_type, recipe, tensors_of
from whichgpu.models.quant import get_quant


def _types(r, category, expert=None):
    return {(t.tensor.layer, t.type) for t in r.tensors if t.tensor.category == category
            and (expert is None or t.tensor.expert == expert)}


def test_bits_per_weight_come_from_ggml_block_layouts():
    # ggml-common.h: block_q4_K is 2 halves + 12 scale bytes + 128 quant bytes per 256
    assert ggml_type("Q4_K").bits == pytest.approx(8 * (2 * 2 + 12 + 128) / 256)
    assert ggml_type("Q6_K").bits == pytest.approx(6.5625)
    assert ggml_type("IQ1_S").bits == pytest.approx(1.5625)
    assert ggml_type("MXFP4").bits == pytest.approx(4.25)
    assert ggml_type("NVFP4").bits == pytest.approx(4.5)


def test_every_file_type_has_a_format_and_a_known_default_type():
    for ftype, default in FTYPES.items():
        ggml_type(default)
        get_quant(ftype)  # the CLI accepts it


def test_q4_k_m_gives_attn_v_and_ffn_down_q6_k_in_the_use_more_bits_layers():
    m = resolve_model("llama-3.1-8b")
    r = recipe(m, "q4_k_m")
    n = m.num_layers
    more = {i for i in range(n) if i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2}
    assert _types(r, "ffn_down") == {(i, "Q6_K" if i in more else "Q4_K") for i in range(n)}
    assert _types(r, "attn_v") == {(i, "Q6_K" if i in more else "Q4_K") for i in range(n)}
    assert _types(r, "attn_q") == {(i, "Q4_K") for i in range(n)}
    assert _types(r, "output") == {(None, "Q6_K")}
    assert _types(r, "token_embd") == {(None, "Q4_K")}


def test_moe_experts_follow_the_same_layer_rules_as_dense_ffn_down():
    m = resolve_model("qwen3-30b-a3b")
    r = recipe(m, "q4_k_m")
    exps = _types(r, "ffn_down", expert=True)
    assert {t for _, t in exps} == {"Q4_K", "Q6_K"}
    assert (0, "Q6_K") in exps and (m.num_layers - 1, "Q6_K") in exps
    # gate and up experts stay at the file type's default
    assert {t for _, t in _types(r, "ffn_up", expert=True)} == {"Q4_K"}


def test_mxfp4_moe_quantizes_only_the_experts_and_everything_else_q8_0():
    m = resolve_model("gpt-oss-20b")
    r = recipe(m, "mxfp4_moe")
    for t in r.tensors:
        assert t.type == ("MXFP4" if t.tensor.expert else "Q8_0"), t.tensor.name


def test_rows_the_block_does_not_divide_fall_back_as_llama_cpp_does():
    # gpt-oss's hidden size 2880 is not a multiple of 256: K-quants fall back (Q4_K -> Q5_0)
    m = resolve_model("gpt-oss-20b")
    r = recipe(m, "q4_k_m")
    assert {t.type for t in r.tensors if t.tensor.category == "attn_q"} <= {"Q5_0", "Q8_0"}
    assert any("fallback" in n for n in r.notes)


def test_low_bit_iq_file_types_protect_attn_v_and_the_first_ffn_down():
    m = resolve_model("deepseek-v3")  # 256 experts: attn_v-like tensors get Q4_K
    r = recipe(m, "iq1_s")
    assert {t for _, t in _types(r, "attn_kv_b")} == {"Q4_K"}
    assert {t for _, t in _types(r, "attn_output")} == {"IQ2_XXS"}
    assert _types(r, "output") == {(None, "Q5_K")}
    downs = [t for t in r.tensors if t.tensor.category == "ffn_down"]
    assert {t.type for t in downs[: m.num_layers // 8]} == {"Q2_K"}
    assert {t.type for t in downs[m.num_layers // 8:]} == {"IQ1_S"}


def test_the_tensors_add_up_to_the_models_linear_parameters():
    for name in ("llama-3.1-70b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b", "gpt2"):
        m = resolve_model(name)
        linear = sum(g.params for g in m.linears)
        counted = sum(t.params for t in tensors_of(m)
                      if t.category not in ("token_embd", "output"))
        assert counted == pytest.approx(linear, rel=1e-6), name


def test_weight_layout_sums_to_the_total_and_puts_experts_in_moe_layers():
    m = resolve_model("deepseek-v3")
    wb = llm_weight_bytes(m, get_quant("q2_k"), "q2_k")
    assert wb.layer_experts[:3] == (0, 0, 0) and all(b > 0 for b in wb.layer_experts[3:])
    total = wb.outside_layers + sum(wb.layer_experts) + sum(wb.layer_other)
    assert total == pytest.approx(wb.total, rel=1e-6)
    assert wb.experts == sum(wb.layer_experts)


def _file_rows():
    with (ROOT / "validation/memory.csv").open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["measured"] == "file_bytes"
                and "unmodelled" not in (r.get("settings") or "")]


def test_published_moe_gguf_files_are_sized_within_two_percent():
    """Every MoE GGUF file size in validation/memory.csv (a uniform bits-per-weight was 10 %
    high on these: the mix keeps most expert tensors at the file type's low default)."""
    from whichgpu.estimate.validation import memory as validation_memory

    rows = []
    for row in _file_rows():
        m = resolve_model(row["model"], offline=True)
        if m.is_moe and (row["quant"] or "").lower() not in ("bf16", "f16", "fp16"):
            rows.append(row)
    assert len(rows) >= 2
    for row in rows:
        predicted, _ = validation_memory.predict(row)
        measured = float(row["bytes"])
        assert abs(predicted / measured - 1) < 0.02, (row["id"], predicted, measured)


def test_gpt_oss_k_quants_keep_the_checkpoints_mxfp4_experts():
    # bartowski's gpt-oss-20b GGUFs (llama.cpp b6096): "All quants keep the feed forward
    # networks at mxfp4"; Q6_K is 12.04 GB, MXFP4 12.1 GB; Unsloth's Q4_K_M 11.6 GB
    m = resolve_model("gpt-oss-20b")
    r = recipe(m, "q4_k_m")
    assert {t.type for t in r.tensors if t.tensor.expert} == {"MXFP4"}
    assert {t.type for t in r.tensors if not t.tensor.expert} - {"MXFP4"}
    q6 = llm_weight_bytes(m, get_quant("q6_k"), "llamacpp").total
    assert q6 == pytest.approx(12.04e9, rel=0.02)
    assert llm_weight_bytes(m, get_quant("q4_k_m"), "llamacpp").total < q6
    # a dense model's K-quants are untouched by the rule
    assert "MXFP4" not in {t.type for t in recipe(resolve_model("llama-3.1-8b"),
                                                    "q4_k_m").tensors}


def test_a_gguf_holds_the_text_model_only_the_vision_tower_is_its_mmproj_file():
    """Converters write a multimodal model's vision tower to a separate projector file
    (mmproj): the GGUF's bytes leave it out and say so, and a text token never streams it."""
    from dataclasses import replace

    from whichgpu.estimate.speed.llm import streamed_weight_bytes
    from whichgpu.estimate.workload import Workload

    m = resolve_model("gemma-3-27b", offline=True)
    assert m.vision_params > 400_000_000  # SigLIP tower + projector, in params.other
    with_tower = recipe(replace(m, vision_params=0), "q4_k_m")
    r = recipe(m, "q4_k_m")
    assert with_tower.total_bytes - r.total_bytes == pytest.approx(2 * m.vision_params)
    assert any("mmproj" in str(n) for n in r.notes)
    w = Workload(m, quant="bf16", context=4096, engine="vllm")
    wb = llm_weight_bytes(m, get_quant("bf16"), "bf16", engine="vllm")
    assert wb.towers == pytest.approx(2 * m.vision_params)
    streamed, _ = streamed_weight_bytes(w, 1)
    # tied: the output head is the embedding table, read in full for every token
    assert m.tie_word_embeddings
    head = m.vocab_size * m.hidden_size * 2
    assert streamed == pytest.approx(wb.total - wb.embedding - wb.towers + head)
