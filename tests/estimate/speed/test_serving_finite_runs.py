"""Finite benchmark runs as the engines and clients run them (issue 28, serving TPOT and
throughput at saturating rates):

- a run of N requests at a rate lasts the sending (N / rate) plus the last request's time in
  the system, and its throughput is what completed over that duration (vLLM
  benchmark_serving.py, genai-perf), not the offered rate;
- N requests sent at once that all fit in the batch limit run as one wave: nobody is replaced
  while it runs, so the decode steps carry the one fill's prompts and then none, and each
  request's TPOT is the mean over its own tokens (a short output spends all of them in fill
  steps). The closed loop's steady state (a replacement prompt in every step) put
  TensorRT-LLM 0.14's ITL at QPS INF 19-45 % high.
"""

from __future__ import annotations

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _model(lengths: str = "mean") -> ServingModel:
    w = Workload(resolve_model("llama-3.1-8b"), engine="trtllm", quant="fp16", gpus=1,
                 prompt_tokens=467, output_tokens=256)
    return ServingModel(w, get_gpu("h100-sxm"), lengths=lengths)  # type: ignore[arg-type]


def test_a_finite_run_at_a_rate_lasts_the_sending_plus_the_last_request():
    sm = _model()
    steady = sm.at_rate(20.0)
    run = sm.at_rate(20.0, 500)
    expected = 500 / (500 / 20.0 + steady.e2e_s)
    assert run.requests_per_s == pytest.approx(expected, rel=1e-9)
    assert run.requests_per_s < 20.0 * 0.97  # the tail costs more than 3 % at 25 s of sending
    assert run.output_tokens_per_s == pytest.approx(expected * 256, rel=1e-9)
    assert run.tpot_s == steady.tpot_s and run.ttft_s == steady.ttft_s  # latencies unchanged
    assert sm.at_rate(20.0).requests_per_s == 20.0  # a steady stream is still its rate


def test_a_backlog_within_the_batch_limit_has_no_replacement_prompts():
    sm = _model()
    assert sm.limit >= 500
    one_wave = sm.backlog(500, utilisation=False)
    steady = sm._closed(500)[1]  # the closed loop with a new prompt per finished request
    decode = sm.steps.decode(500)
    # one wave: below the closed loop's TPOT (no replacement prompt in each step) and above
    # a plain decode step at the full batch (the fill's steps are in the mean)
    assert decode < one_wave.tpot_s < steady.tpot
    assert any("one wave" in n for n in one_wave.notes)


def test_short_outputs_spend_their_tokens_in_fill_steps():
    """With sampled outputs the per-request mean TPOT is above the fixed-length wave's: a
    request with a short output decodes only in fill steps. With fixed outputs the one-wave
    TPOT is _wave's (fill / 2 + rest x decode) / (output - 1)."""
    sampled = _model("mean")
    fixed = _model("fixed")
    assert fixed.cv2 == 0 and sampled.cv2 > 0
    fixed_tpot = fixed._wave(500)[2]
    assert fixed._one_wave_tpot(500) == pytest.approx(fixed_tpot, rel=1e-6)
    assert sampled._one_wave_tpot(500) > fixed_tpot * 1.02


def test_separate_policy_decodes_wait_out_the_rest_of_the_fill():
    """vLLM V0 (prefill steps first, decodes paused): a request's decode waits out the fill
    still to come after its own prefill, half the fill on average."""
    w = Workload(resolve_model("llama-3.1-8b"), engine="vllm", quant="fp16", gpus=1,
                 prompt_tokens=467, output_tokens=256)
    sm = ServingModel(w, get_gpu("h100-sxm"), version="0.6.0", lengths="fixed")
    assert sm.config.policy == "separate"
    expected = sm._fill_time(200) / 2 / 255 + sm.steps.decode(200)
    assert sm._one_wave_tpot(200) == pytest.approx(expected, rel=1e-6)
    assert sm._one_wave_tpot(200) > sm.steps.decode(200) * 1.02


def test_a_backlog_beyond_the_batch_limit_keeps_the_closed_loop():
    sm = _model()
    over = sm.limit + 200
    point = sm.backlog(over, utilisation=False)
    assert point.tpot_s == pytest.approx(sm._closed(sm.limit)[1].tpot, rel=1e-9)
    assert not any("one wave" in n for n in point.notes)
