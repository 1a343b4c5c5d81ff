"""Routed-expert GEMM efficiency by expert size, and its fixed cost once per forward pass
(issue 28, serve28). A larger expert reaches half a dense GEMM's rate at fewer tokens per
expert (SGLang: n_half x (S_ref / S)^a); the n / (n + n_half) curve is a fixed cost per pass,
so a serving step that carries two prompts pays it once, not twice. Each fails if the
mechanism is removed."""

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.constants import overridden, speed_value
from whichgpu.estimate.speed.hardware import hardware
from whichgpu.estimate.speed.llm import expert_matrix_size, prefill_time
from whichgpu.estimate.speed.serving import ServingModel
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model


def _dsr1(engine: str, tp: int = 8) -> Workload:
    return Workload(resolve_model("deepseek-ai/DeepSeek-R1", offline=True), engine=engine,
                    prompt_tokens=1024, output_tokens=256, gpus=tp, tp=tp)


def test_expert_size_is_hidden_times_width_per_gpu():
    """DeepSeek-R1: hidden 7168, experts 2048 wide, split by TP8 -> 7168 x 256."""
    assert expert_matrix_size(_dsr1("sglang")) == 7168 * 2048 / 8


def test_sglang_prefill_of_larger_experts_is_faster_than_without_the_size_term():
    """DeepSeek-R1's per-GPU experts (1.75x the reference size) get a smaller half size: the
    prefill's compute falls; with the exponent at 0 it is the old, size-blind value."""
    assert float(speed_value("moe_expert_size_exponent")["sglang"]) > 0
    w, hw = _dsr1("sglang"), hardware(get_gpu("h200-sxm"), 8)
    sized = prefill_time(w, hw, 1, 1024).parts["compute"]
    table = dict(speed_value("moe_expert_size_exponent"))
    with overridden("speed_constants", "moe_expert_size_exponent", {**table, "sglang": 0.0}):
        blind = prefill_time(w, hw, 1, 1024).parts["compute"]
    assert sized < 0.97 * blind


def test_engines_without_a_size_exponent_are_unchanged():
    """vLLM keeps the size-blind curve (exponent 0): setting SGLang's leaves it alone."""
    w, hw = _dsr1("vllm"), hardware(get_gpu("h200-sxm"), 8)
    before = prefill_time(w, hw, 1, 1024).parts["compute"]
    table = dict(speed_value("moe_expert_size_exponent"))
    with overridden("speed_constants", "moe_expert_size_exponent", {**table, "sglang": 2.0}):
        assert prefill_time(w, hw, 1, 1024).parts["compute"] == pytest.approx(before)


def test_two_prompts_in_one_step_pay_the_expert_fixed_cost_once():
    """A MoE step carrying two prompts costs less than two steps of one (the fixed part is
    per forward pass, read from the speed model's prefill of one and of two prompts); one
    prompt's worth costs what the speed model's one-prompt prefill computes."""
    gpu = get_gpu("h200-sxm")
    steps = ServingModel(_dsr1("sglang"), gpu).steps
    assert steps.prefill_step_fixed_s > 0
    one, two = steps.mixed(0.0, 1024), steps.mixed(0.0, 2048)
    assert two < 2 * one - 0.5 * steps.prefill_step_fixed_s
    pre = prefill_time(_dsr1("sglang"), hardware(gpu, 8), 1, 1024).parts["compute"]
    assert (steps.prefill_compute_per_token * 1024 + steps.prefill_step_fixed_s
            == pytest.approx(pre, rel=1e-9))


def test_dense_models_have_no_per_pass_expert_cost():
    w = Workload(resolve_model("meta-llama/Llama-3.1-70B-Instruct", offline=True),
                 engine="sglang", prompt_tokens=1024, output_tokens=256, gpus=8, tp=8)
    assert ServingModel(w, get_gpu("h200-sxm")).steps.prefill_step_fixed_s == 0.0
