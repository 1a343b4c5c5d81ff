"""Megatron's partial activation offload and fused SwiGLU (issue 29).

Megatron-Bridge's Llama 3 70B pre-training recipes on 64 GB200/GB300 with Megatron FSDP offload
the activations of 20 to 40 of the 80 layers (``cpu_offloading_num_layers``); whichgpu could
only offload all of them or none, so the published runs came out at 446 GB per GPU, a false
"does not fit". ``activation_offload_layers`` is that count; the published rows in
validation/speed.csv carry their recipe's value. Megatron Core's fused SwiGLU saves only the
gate-and-up output for backward (one intermediate-width tensor fewer per layer than eager
SwiGLU)."""

from __future__ import annotations

import re

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import memory_band, verdict
from whichgpu.estimate.validation import default_path, read_rows
from whichgpu.estimate.validation.rows import settings

_70B = "meta-llama/Meta-Llama-3-70B"


def _offloaded_runs() -> list[dict[str, str]]:
    return [r for r in read_rows(default_path("speed"))
            if "activation_offload_layers" in settings(r)]


def _workload(row: dict[str, str], offload: int | None):
    micro = int(re.search(r"micro_batch=(\d+)", row["conditions"]).group(1))  # type: ignore[union-attr]
    return build_workload(row["model"], task="pretrain", context=row["seq_len"],
                          gpus=int(row["gpu_count"]), tp=int(row["tp"]), batch=micro,
                          framework="megatron", fp8_training=row["quant"] == "fp8", zero=3,
                          activation_offload_layers=offload)


def _verdict(w, gpu: str) -> str:
    usable = get_gpu(gpu).usable_memory_bytes
    return verdict(estimate_memory(w).total_bytes, usable, memory_band(w))


def test_the_published_70b_fsdp_runs_name_their_recipes_offload():
    rows = _offloaded_runs()
    assert {r["gpu"] for r in rows} == {"gb200", "gb300"}
    assert {int(settings(r)["activation_offload_layers"]) for r in rows} == {20, 40}
    assert all("fsdp=true" in r["conditions"] for r in rows)


@pytest.mark.parametrize("row", _offloaded_runs(), ids=lambda r: r["id"])
def test_a_published_run_is_no_longer_a_false_does_not_fit(row):
    n = int(settings(row)["activation_offload_layers"])
    # the recipe fills the card, so "borderline" is honest; "does not fit" was the false answer
    assert _verdict(_workload(row, n), row["gpu"]) != "does not fit"
    assert _verdict(_workload(row, None), row["gpu"]) == "does not fit"


def test_offloaded_layers_move_their_kept_activations_to_cpu_ram():
    kw = dict(task="pretrain", context="8k", gpus=64, batch=2, framework="megatron",
              fp8_training=True, zero=3)
    base = estimate_memory(build_workload(_70B, **kw))
    off = estimate_memory(build_workload(_70B, activation_offload_layers=40, **kw))
    moved = base.term("activations") - off.term("activations")
    per_layer = base.details["activation_bytes_per_token_layer"] * 8192 * 2
    assert moved == pytest.approx(40 * per_layer, rel=1e-6)
    assert off.details["host_bytes"]["activations"] == pytest.approx(moved, rel=1e-6)
    assert "40 of 80 layers" in str(next(t for t in off.terms if t.name == "activations").formula)


def test_megatron_fused_swiglu_saves_one_intermediate_tensor_less():
    from whichgpu.estimate.memory.training import activation_bytes_per_token_layer

    m = build_workload("llama-3.1-8b", task="pretrain").model
    eager = activation_bytes_per_token_layer(m, 1)
    fused = activation_bytes_per_token_layer(m, 1, fused_swiglu=True)
    assert eager - fused == 2 * m.intermediate_size  # one bf16 tensor of the MLP's width
    kw = dict(task="pretrain", context="8k", gpus=8, loss="fused")
    mega = estimate_memory(build_workload("llama-3.1-8b", framework="megatron", **kw))
    assert mega.details["activation_bytes_per_token_layer"] < eager


def test_offload_layer_count_refusals_are_one_line():
    with pytest.raises(InputError, match="below the model's 80 layers"):
        build_workload(_70B, task="pretrain", context="8k", activation_offload_layers=80)
    with pytest.raises(InputError, match="LLM training"):
        build_workload(_70B, activation_offload_layers=4)


def test_megatron_keeps_fp32_gradient_buffers():
    # Megatron-Bridge's recipes set grad_reduce_in_fp32: every main_grad lives in an fp32
    # buffer; with the distributed optimizer (ZeRO-1) each rank keeps the whole buffer
    kw = dict(task="pretrain", context="8k", gpus=8, zero=1)
    mega = build_workload("llama-3.1-8b", framework="megatron", **kw)
    plain = build_workload("llama-3.1-8b", **kw)
    n = mega.model.params_total
    assert estimate_memory(mega).term("gradients") == n * 4
    assert estimate_memory(plain).term("gradients") == n * 2
    # under Megatron FSDP they are sharded like the rest
    fsdp = build_workload("llama-3.1-8b", framework="megatron", **{**kw, "zero": 3})
    assert estimate_memory(fsdp).term("gradients") == n * 4 // 8
