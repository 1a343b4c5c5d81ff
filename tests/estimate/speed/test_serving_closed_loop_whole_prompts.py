"""A closed loop's mean step carries whole prompts, as the engine schedules them (issue 28).

A benchmark's max-concurrency run keeps ``C`` requests in flight; with varied output lengths
they end at scattered steps and each user's next prompt is scheduled whole into one step, so
most steps carry no prompt. Until 2026-12-07 the mean model spread the prompt share over every
step (``at_concurrency`` and max throughput), where a dense model's prompt compute hid under
the weights read and a MoE's share woke every expert in every step: at 4 users a MoE replica's
TPOT came out 75 % above the step-by-step simulation of the same replica, a dense one's 33 %
below at 16 users. Here the mean model's closed loop is held to the simulation's mean."""

from __future__ import annotations

import pytest

from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.speed.serving_sim import Arrival, Traffic, simulate
from whichgpu.estimate.speed.traffic import Lengths, LengthShape
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model

_CASES = [  # (model, engine, GPU, prompt, output, users); the old step's TPOT error
    ("Qwen/Qwen3-30B-A3B", "vllm", "h100-sxm", 1024, 512, 4),  # MoE: +75 %
    ("Qwen/Qwen3-8B", "vllm", "a100-80gb-sxm", 2000, 300, 16),  # dense: -33 %
    ("Qwen/Qwen3-8B", "trtllm", "h100-sxm", 1024, 256, 64),  # dense, 8,192 budget: -20 %
]


@pytest.mark.parametrize("name, engine, gpu, prompt, output, users", _CASES)
def test_closed_loop_mean_matches_the_simulation(name, engine, gpu, prompt, output, users):
    model = resolve_model(name, offline=True)
    w = Workload(model=model, engine=engine, prompt_tokens=prompt, output_tokens=output,
                 context=prompt + output)
    card = next(g for g in default_catalog().gpus if g.id == gpu)
    sm = ServingModel(w, card, lengths="mean")
    mean = sm.at_concurrency(users)
    # outputs spread around their mean (so users fall out of step), prompts fixed
    lengths = Lengths(LengthShape.SHAREGPT, float(prompt), float(output), 0.0, 0.5,
                      filtered=False)
    run = simulate(sm, Traffic(lengths, Arrival.CLOSED, users, max(400, 20 * users)))
    assert mean.tpot_s == pytest.approx(run.tpot.mean, rel=0.08)
    assert mean.output_tokens_per_s == pytest.approx(run.output_tokens_per_s, rel=0.10)
