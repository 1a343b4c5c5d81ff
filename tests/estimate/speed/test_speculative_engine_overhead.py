"""vLLM's own work around a speculative step (rejection sampling, metadata, one host-launched
drafter forward per drafted token) is priced, so EAGLE-3's speed-up on Llama-3.1-8B / H100
matches vLLM's measured sweep instead of overstating it (estimate/speed/speculative.py)."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.speed import estimate_speed
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.speculative import ENGINE_SPEC_OVERHEAD_S, speculative_step
from whichgpu.vocabulary import Engine

# vllm-project/vllm#20780 (2025-07-10): H100, batch 1, TPOT 7.07 ms plain; EAGLE-3 TPOT by K
MEASURED_TPOT_MS = {2: 4.32, 3: 4.09, 4: 4.05, 7: 4.29}


def _speedup(k: int, engine: str = "vllm", model: str = "llama-3.1-8b",
             gpu: str = "h100-sxm", quant: str = "bf16") -> float:
    card = default_catalog().get(gpu)
    rates = []
    for spec in (None, "eagle"):
        w = build_workload(model, quant=quant, engine=engine, prompt_tokens="128",
                           output_tokens="256", speculative=spec,
                           draft_tokens=k if spec else None)
        est = estimate_speed(w, card, 1, check_fit=False, saturation=False)
        rates.append(est.rates["decode_tokens_per_s_per_sequence"].typical)
    return rates[1] / rates[0]


def test_the_eagle3_speed_up_on_h100_is_vllms_measured_one_within_15_percent():
    # before: x2.09 at K=3 against x1.73 measured (+21 %)
    for k, tpot in MEASURED_TPOT_MS.items():
        measured = 7.07 / tpot
        assert _speedup(k) == pytest.approx(measured, rel=0.15), k


def test_more_draft_tokens_past_four_cost_more_than_they_yield():
    # measured x1.75 at K=4, x1.65 at K=7 (-6 %); each drafted token is a host-launched
    # forward of the head (before: -2 %, the drafting nearly free)
    assert _speedup(7) < 0.96 * _speedup(4)


def test_the_step_carries_vllms_per_step_and_per_forward_work():
    per_step, per_forward = ENGINE_SPEC_OVERHEAD_S[Engine.VLLM]
    hw = hardware(default_catalog().get("h100-sxm"), 1)

    def step(engine: str):
        w = build_workload("llama-3.1-8b", engine=engine, speculative="eagle", draft_tokens=3,
                           prompt_tokens="128", output_tokens="256")
        return speculative_step(w, hw, 1, 256)

    vllm, sglang = step("vllm"), step("sglang")
    # batch 1 is memory-bound: the verify step is the plain step plus vLLM's per-step work
    assert vllm.verify_s - vllm.plain.seconds == pytest.approx(per_step, rel=0.05)
    assert Engine.SGLANG not in ENGINE_SPEC_OVERHEAD_S  # no measurement: nothing added
    assert sglang.verify_s == pytest.approx(sglang.plain.seconds, rel=0.05)
    drafted = vllm.draft_s / 3
    assert drafted > per_forward and drafted - per_forward < 0.6e-3  # the head's GPU time


def test_a_run_the_overhead_was_not_set_from_moves_toward_its_measurement():
    # vLLM MTP n=2 on an RTX PRO 6000 Max-Q, Qwen3.8-27B NVFP4 (sudoingX/qwen38-mtp PR 11):
    # x1.52 measured; the model said x2.04 (+35 %) before, now within 20 %
    card = default_catalog().get("rtx-pro-6000-maxq")
    rates = []
    for spec in (None, "mtp"):
        w = build_workload("qwen3.8-27b", quant="nvfp4", engine="vllm", prompt_tokens="512",
                           output_tokens="256", speculative=spec,
                           draft_tokens=2 if spec else None)
        rates.append(estimate_speed(w, card, 1, check_fit=False, saturation=False)
                     .rates["decode_tokens_per_s_per_sequence"].typical)
    assert rates[1] / rates[0] == pytest.approx(96.1 / 63.3, rel=0.20)
