"""Megatron's memory defaults (issue 29): the Llama 3 8B pre-training runs Megatron-Bridge
publishes on 8 GPUs (validation/speed.csv, framework=megatron) fit the cards they ran on, with
the run's own micro-batch, FP8 and sharding (Megatron FSDP = ZeRO-3, else the distributed
optimizer = ZeRO-1). Without Megatron-Bridge's fused cross-entropy (Transformer Engine's, 2
bytes per logit, not transformers' 16) and Transformer Engine's FP8 linear inputs the H100 run
came out over the card (87.2 GB of 85.5) and the B200/GB200 runs borderline (177.6 GB)."""

from __future__ import annotations

import re

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import memory_band, verdict
from whichgpu.estimate.validation import default_path, read_rows


def _published() -> list[dict[str, str]]:
    return [r for r in read_rows(default_path("speed"))
            if "framework=megatron" in (r.get("settings") or "")
            and "unmodelled" not in r["settings"] and r["gpu_count"] == "8"]


def _need(row: dict[str, str]) -> tuple[int, int, str]:
    micro = int(re.search(r"micro_batch=(\d+)", row["conditions"]).group(1))  # type: ignore[union-attr]
    fsdp = "fsdp=true" in row["conditions"]
    w = build_workload(row["model"], task="pretrain", context=row["seq_len"], gpus=8,
                       tp=int(row["tp"]), batch=micro, framework="megatron",
                       fp8_training=row["quant"] == "fp8", zero=3 if fsdp else 1)
    usable = get_gpu(row["gpu"]).usable_memory_bytes
    need = estimate_memory(w).total_bytes
    return need, usable, verdict(need, usable, memory_band(w))


def test_there_are_published_megatron_runs_to_check():
    rows = _published()
    assert len(rows) >= 10
    assert {r["gpu"] for r in rows} >= {"h100-sxm", "b200", "gb200"}


@pytest.mark.parametrize("row", _published(), ids=lambda r: r["id"])
def test_a_published_megatron_run_fits_its_card(row):
    need, usable, v = _need(row)
    # not merely "borderline": the run is published, the estimate's band must not reach it
    assert v == "fits", (need / 1e9, usable / 1e9)


def test_megatron_logits_are_te_fused_not_transformers_fp32_copies():
    kw = dict(task="pretrain", context="8k", gpus=8, tp=2)
    mega = estimate_memory(build_workload("llama-3.1-8b", framework="megatron", **kw))
    plain = estimate_memory(build_workload("llama-3.1-8b", **kw))
    tokens, vocab = 8192, build_workload("llama-3.1-8b", **kw).model.vocab_size
    assert mega.term("logits") == tokens * vocab * 2 // 2  # split over the two TP ranks
    assert plain.term("logits") == tokens * vocab * 16 // 2
    # a loss the user names still wins over the framework's own
    fused = estimate_memory(build_workload("llama-3.1-8b", framework="megatron", loss="fused",
                                           **kw))
    assert fused.term("logits") == 1024 * vocab * 6 // 2  # one chunk, the --loss fused model


def test_sequence_parallelism_shards_what_tensor_parallelism_leaves_whole():
    kw = dict(task="pretrain", context="8k", gpus=8, tp=4, loss="fused")
    w = build_workload("llama-3.1-8b", framework="megatron", **kw)
    from whichgpu.estimate.memory.training import activation_bytes_per_token_layer

    h = w.model.hidden_size
    with_sp = activation_bytes_per_token_layer(w.model, 4, 4)
    without = activation_bytes_per_token_layer(w.model, 4)
    assert without - with_sp == 2 * 4 * h * (1 - 1 / 4)  # the 4 hidden-size tensors, / TP
    mega = estimate_memory(w).term("activations")
    plain = estimate_memory(build_workload("llama-3.1-8b", **kw)).term("activations")
    assert mega < plain - 32 * 8192 * (without - with_sp) * 0.99  # every layer, every token


def test_te_fp8_linears_keep_their_inputs_in_fp8():
    from whichgpu.estimate.memory.training import fp8_saved_input_savings_per_token_layer

    kw = dict(task="pretrain", context="8k", gpus=8, framework="megatron")
    w = build_workload("llama-3.1-8b", fp8_training=True, **kw)
    fp8 = estimate_memory(w).term("activations")
    bf16 = estimate_memory(build_workload("llama-3.1-8b", **kw)).term("activations")
    m = w.model
    saved = fp8_saved_input_savings_per_token_layer(m, 1)
    # two norm outputs and the down-projection input at 1 byte, an FP8 copy of attention out
    assert saved == 2 * m.hidden_size + m.intermediate_size - m.num_attention_heads * m.head_dim
    assert bf16 - fp8 == pytest.approx(m.num_layers * 8192 * saved, abs=2)
    # torchtitan's float8 keeps no such profile setting: FP8 there leaves activations alone
    tt = dict(kw, framework="torchtitan")
    assert (estimate_memory(build_workload("llama-3.1-8b", fp8_training=True, **tt))
            .term("activations") == estimate_memory(build_workload("llama-3.1-8b", **tt))
            .term("activations"))


def test_megatron_sft_uses_the_native_vocab_parallel_loss():
    # Megatron-Bridge's SFT recipes pick cross_entropy_fusion_impl 'native' (an fp32 softmax
    # kept beside the bf16 logits, 6 bytes), its pre-training recipes Transformer Engine's (2)
    kw = dict(context="4k", gpus=8, framework="megatron")
    w = build_workload("llama-3.1-8b", task="full-ft", **kw)
    sft = estimate_memory(w).term("logits")
    pre = estimate_memory(build_workload("llama-3.1-8b", task="pretrain", **kw)).term("logits")
    assert sft == 4096 * w.model.vocab_size * 6
    assert pre == 4096 * w.model.vocab_size * 2
