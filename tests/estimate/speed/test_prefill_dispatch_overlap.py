"""A serving engine's per-layer prefill dispatch, and MLA's prefill form (issue 28).

The host launches a layer's kernels while the GPU runs the layers before it, so the per-layer
dispatch (vLLM 0.8 ms a layer, aiconfigurator's figure) is a floor under a short prompt's
prefill, not a cost added to a long one: a 1k-token NVFP4 prefill of a 64-layer model on an
RTX PRO 6000 measured 81.7 ms, less than 64 x 0.8 ms of dispatch plus its matmuls.

vLLM, SGLang and TensorRT-LLM prefill MLA in its expanded (non-absorbed) form: QK over
qk_nope + qk_rope dims, PV over v_head_dim.
"""

from __future__ import annotations

import pytest

from paths import ROOT
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import (
    engine_value,
    mla_prefill_share,
    prefill_time,
)
from whichgpu.estimate.validation import read_rows
from whichgpu.estimate.validation.speed import estimate_of, predict


def _row(row_id: str) -> dict[str, str]:
    return next(r for r in read_rows(ROOT / "validation/speed.csv") if r["id"] == row_id)


def _vllm_prefill(prompt: int):
    row = {**_row("pre-hik-pro6000ws-q38-27b-nvfp4-vllm-ttft1k"), "prompt_tokens": str(prompt)}
    w, gpu, _, _ = estimate_of(row)
    hw = hardware(gpu, w.gpus)
    layers = w.model.num_layers * engine_value("prefill_per_layer_ms", "vllm", hw) * 1e-3
    return prefill_time(w, hw, 1, prompt), layers


def test_a_short_prompt_waits_for_the_dispatch():
    step, layers = _vllm_prefill(16)
    gpu_work = max(step.parts["compute"], step.parts["memory-bandwidth"])
    assert gpu_work < layers
    assert step.seconds >= layers


def test_a_long_prompt_hides_the_dispatch_behind_its_matmuls():
    step, layers = _vllm_prefill(4096)
    gpu_work = max(step.parts["compute"], step.parts["memory-bandwidth"])
    assert gpu_work > layers
    assert step.seconds < gpu_work + layers / 2
    assert step.parts["fixed-overhead"] < layers / 10


def test_the_rtx_pro_6000_nvfp4_ttft_is_no_longer_dispatch_bound():
    """Measured 81.7 ms; with the dispatch added to the matmuls the model said 140 ms."""
    row = _row("pre-hik-pro6000ws-q38-27b-nvfp4-vllm-ttft1k")
    predicted, _, _ = predict(row)
    assert predicted < 1.25 * float(row["value"])


def test_mla_prefill_counts_the_expanded_head_dims():
    from whichgpu.models.resolve import resolve_model

    v3 = resolve_model("deepseek-v3")
    mla = v3.mla
    assert mla is not None and not mla.index_topk
    assert mla_prefill_share(v3) == pytest.approx(
        (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) / (2 * v3.head_dim))
    assert mla_prefill_share(v3) < 1
    assert mla_prefill_share(resolve_model("llama-3.1-8b")) == 1.0
    sparse = resolve_model("deepseek-v3.2")
    assert sparse.mla is not None and sparse.mla.index_topk
    assert mla_prefill_share(sparse) == 1.0


def test_only_the_serving_engines_prefill_mla_in_the_expanded_form(monkeypatch):
    """SGLang's DeepSeek prefill at 16k tokens costs less compute with the MLA share than
    with the full count; llama.cpp's does not take the share."""
    from whichgpu.estimate import memo
    from whichgpu.estimate.speed import llm

    base = {**_row("pre-sgl14764-dsv31-fp8-8xh200-b16-in512"), "batch": "1",
            "prompt_tokens": "16384"}
    w, gpu, _, _ = estimate_of(base)
    hw = hardware(gpu, w.gpus)

    def compute(workload) -> float:
        with memo.reference():  # not the memos (the prefill's rates): the share is patched
            return llm.prefill_time(workload, hw, 1, 16384).parts["compute"]

    sglang = compute(w)
    llamacpp = compute(w.with_(engine="llamacpp"))
    monkeypatch.setattr(llm, "mla_prefill_share", lambda m: 1.0)
    assert compute(w) > sglang * 1.01
    assert compute(w.with_(engine="llamacpp")) == pytest.approx(llamacpp)
