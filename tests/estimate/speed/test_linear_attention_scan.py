"""The Gated DeltaNet layers' chunked scan in a serving engine's prefill (issue 28).

vLLM and SGLang prefill a Qwen3-Next / Qwen3.5 linear-attention layer with fla's chunked
gated-delta-rule kernels: they walk a sequence's 64-token chunks in order and parallelise
over heads and sequences only, so the scan costs a time per call, per chunk and per head and
chunk (vLLM PR 38981's B200 table, speed constant linear_attention_scan_us), whatever the
GPU's tensor peak. Without it SGLang's Qwen3.6 27B prefill at 8,192 tokens came out 25 % short
on a B200.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from paths import ROOT
from whichgpu.estimate.speed import llm
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import linear_scan_s, prefill_time
from whichgpu.estimate.validation import read_rows
from whichgpu.estimate.validation.speed import estimate_of, predict
from whichgpu.models import resolve_model


def _row(row_id: str) -> dict[str, str]:
    return next(r for r in read_rows(ROOT / "validation/speed.csv") if r["id"] == row_id)


def _one_layer(heads: int):
    """Qwen3.8-27B cut to one Gated DeltaNet layer of ``heads`` 128 x 128 value heads."""
    m = resolve_model("Qwen/Qwen3.8-27B")
    layer = next(x for x in m.layers if x.attention == "linear")
    return replace(m, layers=(replace(layer, state_fp32_elements=heads * 128 * 128),))


@pytest.mark.parametrize(("heads", "tokens", "measured_ms"), [
    (8, 2048, 0.191), (8, 4096, 0.256), (8, 8192, 0.381), (16, 8192, 0.427)])
def test_the_scan_figures_give_back_the_kernel_times_they_come_from(heads, tokens,
                                                                    measured_ms):
    assert linear_scan_s(_one_layer(heads), 1, tokens) * 1e3 == pytest.approx(
        measured_ms, rel=0.03)


@pytest.mark.parametrize(("sequences", "tokens", "measured_ms"), [(8, 1024, 0.195),
                                                                  (4, 2048, 0.215)])
def test_batched_sequences_share_a_call_and_its_chunk_steps(sequences, tokens, measured_ms):
    """The same table's batched rows, not used to set the figures: within 6 %."""
    assert linear_scan_s(_one_layer(8), sequences, tokens) * 1e3 == pytest.approx(
        measured_ms, rel=0.06)


def _sglang_prefill(row_id: str):
    w, gpu, _, _ = estimate_of(_row(row_id))
    hw = hardware(gpu, w.gpus)
    return w, prefill_time(w, hw, 1, 8192)


def test_the_scan_is_in_a_hybrid_prefill_and_does_not_follow_the_tensor_peak():
    w, on_b200 = _sglang_prefill("pre-sglck36-27b-bf16-b200-ttft8k")
    _, on_h100 = _sglang_prefill("pre-sglck36-27b-bf16-h100-ttft8k")
    scan = {c.name: c.seconds for c in on_b200.components}["linear-attention scan"]
    assert scan == pytest.approx(linear_scan_s(w.model, 1, 8192)) and scan > 0.02
    assert {c.name: c.seconds for c in on_h100.components}["linear-attention scan"] == scan
    # the matmuls are faster on the B200; the scan is not, so it is a larger share there
    assert on_b200.parts["compute"] < on_h100.parts["compute"]
    assert scan / on_b200.seconds > scan / on_h100.seconds


def test_models_without_linear_attention_and_llamacpp_have_no_scan():
    assert linear_scan_s(resolve_model("meta-llama/Llama-3.1-8B"), 1, 8192) == 0.0
    row = {**_row("pre-sglck36-27b-bf16-b200-ttft8k"), "engine": "llamacpp",
           "quant": "q4_k_m"}
    w, gpu, _, _ = estimate_of(row)
    step = prefill_time(w, hardware(gpu, w.gpus), 1, 8192)
    assert {c.name: c.seconds for c in step.components}["linear-attention scan"] == 0.0


def test_without_the_scan_the_sglang_hybrid_prefill_is_short_again(monkeypatch):
    row = _row("pre-sglck36-27b-bf16-b200-ttft8k")
    measured = float(row["value"])
    with_scan = predict(row)[0]
    from whichgpu.estimate import memo

    monkeypatch.setattr(llm, "linear_scan_s", lambda *a, **k: 0.0)
    memo.clear()
    without = predict(row)[0]
    memo.clear()
    assert without < with_scan
    assert abs(with_scan - measured) < abs(without - measured)
