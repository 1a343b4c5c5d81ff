"""Impossible or absurd workloads are refused with a reason (InputError: CLI exit 2, HTTP 422),
never answered with a number."""

import pytest

from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.fit import layout_for
from whichgpu.estimate.workload import LIMITS, Workload, tp_problem
from whichgpu.models import resolve_model

LLAMA_8B = resolve_model("llama-3.1-8b", offline=True)  # 32 heads, 8 KV heads, 32 layers
PHI3_MEDIUM = resolve_model("phi-3-medium", offline=True)  # 40 heads, 10 KV heads


def test_context_beyond_the_trained_maximum_is_refused_unless_allowed():
    with pytest.raises(InputError, match=r"trained maximum of 131,072.*allow-long-context"):
        Workload(LLAMA_8B, context=10_000_000)
    # the same question with RoPE scaling declared is answered, and says so
    w = Workload(LLAMA_8B, context=262_144, allow_long_context=True)
    e = estimate_memory(w)
    assert e.term("kv_cache") == 262_144 * 128 * 1024  # 128 KiB per token, f16
    assert any("trained maximum" in a for a in e.assumptions)


def test_training_sequence_beyond_the_maximum_is_refused_and_the_default_respects_it():
    with pytest.raises(InputError, match="trained maximum"):
        Workload(LLAMA_8B, task="lora", context=200_000)
    gpt2 = resolve_model("gpt2", offline=True)  # 1,024 positions
    assert Workload(gpt2, task="full-ft").seq_len == 1024


def test_prompt_plus_output_beyond_the_maximum_is_refused():
    with pytest.raises(InputError, match="trained maximum"):
        Workload(LLAMA_8B, prompt_tokens=130_000, output_tokens=4_000)


@pytest.mark.parametrize("field", sorted(LIMITS))
def test_absurd_magnitudes_are_refused(field):
    with pytest.raises(InputError, match="beyond what whichgpu models"):
        Workload(LLAMA_8B, allow_long_context=True, **{field: LIMITS[field] * 1000})


def test_tensor_parallel_must_split_the_attention_heads():
    with pytest.raises(InputError, match="32 attention heads do not split evenly over 3"):
        Workload(LLAMA_8B, gpus=3, tp=3)
    # with no --tp named, vLLM on 3 GPUs takes the layout the heads allow: tp=1 x pp=3
    three = Workload(LLAMA_8B, gpus=3, engine="vllm")
    assert (three.tp_degree, three.pp_degree) == (1, 3)
    Workload(LLAMA_8B, gpus=3, tp=1, pp=3)  # layer split instead: fine


def test_tensor_parallel_must_split_or_replicate_the_kv_heads():
    # 40 query heads split over 8, but 10 KV heads neither split nor replicate over 8
    assert PHI3_MEDIUM.num_attention_heads % 8 == 0
    with pytest.raises(InputError, match="10 KV heads"):
        Workload(PHI3_MEDIUM, gpus=8, tp=8, engine="vllm")
    # with no --tp named, 8 GPUs take the layout the heads allow
    eight = Workload(PHI3_MEDIUM, gpus=8, engine="vllm")
    assert (eight.tp_degree, eight.pp_degree) == (2, 4)
    assert tp_problem(PHI3_MEDIUM, 2) is None and tp_problem(PHI3_MEDIUM, 8) is not None
    # the fit search falls back to a layout that works: tp=2 (5 KV heads each) x pp=4
    w = layout_for(Workload(PHI3_MEDIUM, engine="vllm"), 8)
    assert (w.tp_degree, w.pp_degree) == (2, 4)


def test_more_pipeline_stages_than_layers_is_refused():
    with pytest.raises(InputError, match="has 32: use --pp 32"):
        Workload(LLAMA_8B, gpus=64, pp=64)


def test_memory_with_params_and_no_model_name_works_and_is_marked(cli):
    r = cli("memory", "--params", "70e9", "--quant", "awq", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["approximate"] is True
    assert any("approximation" in x for x in d["warnings"])
    r = cli("memory")
    assert r.code == 2 and "--params" in r.err


def test_speed_with_a_bare_size_is_marked_approximate(cli):
    # (the speed JSON itself is built by the speed layer; the note goes to stderr)
    r = cli("speed", "--params", "70e9", "--gpu", "h100-sxm", "--quant", "awq", "--json")
    assert r.code == 0, r.err
    assert "approximation" in r.err
    r = cli("speed", "70B", "--gpu", "h100-sxm", "--quant", "awq")
    assert r.code == 0 and "approximation" in r.err


@pytest.mark.parametrize("args,reason", [
    (("--context", "10000000"), "trained maximum"),
    (("--gpus", "3", "--tp", "3"), "attention heads"),
    (("--gpus", "64", "--pp", "64"), "layers"),
    (("--context", "1e30", "--allow-long-context"), "beyond what whichgpu models"),
    (("--batch", "1000000000000"), "beyond what whichgpu models"),
])
def test_cli_refuses_impossible_inputs_with_exit_2(cli, args, reason):
    r = cli("memory", "llama-3.1-8b", *args)
    assert r.code == 2 and reason in r.err and "Traceback" not in r.err


def test_zero_denoising_steps_are_refused_not_replaced_by_the_default(cli):
    with pytest.raises(InputError, match="steps must be >= 1, got 0"):
        Workload(resolve_model("flux.1-dev", offline=True), task="image", steps=0)
    r = cli("speed", "flux.1-dev", "--task", "image", "--gpu", "h100-sxm", "--steps", "0")
    assert r.code == 2 and "steps must be >= 1" in r.err


@pytest.mark.parametrize("query,reason", [
    ("context=1e30", "beyond what whichgpu models"),
    ("context=10000000", "trained maximum"),
    ("batch=1000000000000", "batch"),
])
def test_web_api_answers_422_for_absurd_inputs(web, query, reason):
    r = web.get(f"/api/v1/memory?model=llama-3.1-8b&{query}")
    assert r.status_code == 422, r.text
    assert reason in r.json()["detail"]
