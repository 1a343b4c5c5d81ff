"""The continuous-batching serving model: engine defaults as the engines set them, the KV
capacity from each engine's memory semantics, and the model's monotonic properties (more load
-> slower, more replicas -> faster, longer prompts -> later first token)."""

from __future__ import annotations

import math

import pytest

from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.kv import kv_cache
from whichgpu.estimate.speed.serving import ServingModel, fixed_point
from whichgpu.estimate.speed.serving_engine import (
    batch_limit,
    engine_config,
    kv_capacity,
    sglang_mem_fraction,
)
from whichgpu.estimate.speed.serving_queue import erlang_c, md1_wait_s, slot_wait_s
from whichgpu.estimate.workload import Workload
from whichgpu.models import resolve_model
from whichgpu.units import MiB

LLAMA_8B = resolve_model("llama-3.1-8b")
ENGINES = ("vllm", "sglang", "trtllm")


def model(engine="vllm", gpu="h100-sxm", prompt=1000, output=200, **kw) -> ServingModel:
    w = Workload(LLAMA_8B, engine=engine, prompt_tokens=prompt, output_tokens=output, **kw)
    return ServingModel(w, get_gpu(gpu), lengths="mean")


# ------------------------------------------------------------------ engine defaults

def test_vllm_v1_defaults_follow_the_gpu_as_get_batch_defaults_does():
    w = Workload(LLAMA_8B, engine="vllm")
    h100 = engine_config(w, get_gpu("h100-sxm"))
    a100 = engine_config(w, get_gpu("a100-80gb-sxm"))  # >= 70 GiB but named A100
    assert (h100.max_num_seqs, h100.token_budget, h100.policy) == (1024, 8192, "mixed")
    assert (a100.max_num_seqs, a100.token_budget) == (256, 2048)
    offline = engine_config(w, get_gpu("h100-sxm"), usage="offline")
    assert offline.token_budget == 16384  # the LLM class
    assert h100.memory_fraction == 0.9 and h100.memory_rule == "total"


def test_vllm_before_0_8_runs_the_v0_scheduler():
    cfg = engine_config(Workload(LLAMA_8B, engine="vllm"), get_gpu("a100-80gb-sxm"),
                        version="vLLM 0.6.0")
    assert (cfg.generation, cfg.policy, cfg.max_num_seqs) == ("v0", "separate", 256)
    assert not cfg.chunked_prefill


def test_sglang_mem_fraction_static_is_derived_from_the_reserved_memory():
    h100 = get_gpu("h100-sxm")
    fraction, chunk = sglang_mem_fraction(h100, 1, 1, None)
    gpu_mib = h100.usable_memory_bytes / MiB
    reserved = 512 + 8192 * 1.5 + 256 * 2 + 1 / 8 * 1024  # 13,440 MiB, above the 10 GiB floor
    assert chunk == 8192
    assert fraction == round((gpu_mib - reserved) / gpu_mib, 3)
    assert sglang_mem_fraction(h100, 1, 1, "SGLang 0.3.0")[0] == 0.88
    assert sglang_mem_fraction(h100, 8, 1, "SGLang 0.4.3")[0] == 0.81


def test_trtllm_reserves_the_whole_sequence_and_takes_a_fraction_of_the_free_memory():
    cfg = engine_config(Workload(LLAMA_8B, engine="trtllm"), get_gpu("h100-sxm"))
    assert (cfg.reservation, cfg.memory_rule, cfg.memory_fraction) == ("full", "free", 0.9)
    assert engine_config(Workload(LLAMA_8B, engine="trtllm"), get_gpu("h100-sxm"),
                         usage="bench").memory_fraction == 0.95


def test_other_engines_are_refused_with_the_reason():
    with pytest.raises(InputError, match="vLLM, SGLang and TensorRT-LLM"):
        engine_config(Workload(LLAMA_8B, engine="llamacpp"), get_gpu("h100-sxm"))


# ------------------------------------------------------------------ KV capacity

def test_vllm_kv_pool_is_the_utilisation_share_less_the_memory_models_other_terms():
    w = Workload(LLAMA_8B, engine="vllm")
    gpu = get_gpu("h100-sxm")
    cfg = engine_config(w, gpu)
    cap = kv_capacity(w, gpu, cfg, 1000, 200)
    probe = w.with_(batch=1, context=1100)
    terms = {t.name: t.bytes for t in estimate_memory(probe).terms}
    other = sum(v for k, v in terms.items() if k not in ("kv_cache", "engine_reserve"))
    pool = 0.9 * gpu.usable_memory_bytes - other
    per_seq = kv_cache(LLAMA_8B, 1100, 2, "vllm").bytes_per_sequence
    assert cap.pool_bytes_per_gpu == int(pool)
    assert cap.sequences == int(pool // per_seq)
    assert cap.resident_tokens == 1100  # prompt + output / 2 on average


def test_capacity_follows_gpu_memory_utilization():
    w = Workload(LLAMA_8B, engine="vllm")
    gpu = get_gpu("h100-sxm")
    cfg = engine_config(w, gpu)
    caps = [kv_capacity(w, gpu, cfg.with_(memory_fraction=f), 1000, 200).sequences
            for f in (0.5, 0.7, 0.9, 0.95)]
    assert caps == sorted(caps) and caps[0] < caps[-1]
    assert kv_capacity(w, gpu, cfg.with_(memory_fraction=0.2), 1000, 200).sequences == 0


def test_full_reservation_holds_fewer_sequences_than_paged_current_length():
    gpu = get_gpu("h100-sxm")
    w = Workload(LLAMA_8B, engine="trtllm")
    cfg = engine_config(w, gpu)
    full = kv_capacity(w, gpu, cfg, 1000, 1000)
    paged = kv_capacity(w, gpu, cfg.with_(reservation="current"), 1000, 1000)
    assert full.resident_tokens == 2000 and paged.resident_tokens == 1500
    assert full.sequences < paged.sequences


@pytest.mark.parametrize("engine", ENGINES)
def test_a_batch_beyond_capacity_is_never_used(engine):
    sm = model(engine, "rtx-4090", prompt=2000, output=500)
    assert sm.limit <= sm.capacity.sequences
    assert sm.max_throughput().decode_batch <= sm.limit + 1e-9
    for users in (1, sm.limit, 4 * sm.limit):
        assert sm.at_concurrency(users).decode_batch <= sm.limit + 1e-9


def test_max_num_seqs_and_the_token_budget_bound_the_batch():
    sm = model("vllm", "h200-sxm", prompt=100, output=100)
    cfg = sm.config.with_(max_num_seqs=32)
    w, gpu = sm.workload, get_gpu("h200-sxm")
    cap = kv_capacity(w, gpu, cfg, 100, 100)
    assert batch_limit(cfg, cap, 100, 100) == (32, "max-num-seqs")
    small = sm.config.with_(token_budget=512)
    assert batch_limit(small, cap, 100, 100) == (256, "token-budget")  # 512 x 100 / 200


def test_a_model_whose_weights_leave_no_kv_room_is_refused():
    w = Workload(resolve_model("llama-3.1-70b"), engine="vllm", quant="awq", prompt_tokens=100,
                 output_tokens=100)
    with pytest.raises(InputError, match="holds no sequence"):
        ServingModel(w, get_gpu("rtx-4090"))


# ------------------------------------------------------------------ monotonic properties

@pytest.mark.parametrize("engine", ENGINES)
def test_more_load_means_later_first_tokens_and_slower_tokens(engine):
    sm = model(engine)
    cap = sm.max_requests_per_s
    points = [sm.at_rate(cap * f) for f in (0.01, 0.2, 0.4, 0.6, 0.8, 0.95)]
    assert not any(p.saturated for p in points)
    ttft = [p.ttft_s for p in points]
    tpot = [p.tpot_s for p in points]
    assert ttft == sorted(ttft) and ttft[-1] > ttft[0]
    assert tpot == sorted(tpot) and tpot[-1] > tpot[0]
    batches = [p.decode_batch for p in points]
    assert batches == sorted(batches)


@pytest.mark.parametrize("engine", ENGINES)
def test_more_replicas_for_the_same_traffic_mean_lower_latency(engine):
    sm = model(engine)
    total = 2.5 * sm.max_requests_per_s  # more than one, two or ... replicas can take
    answers = [sm.at_rate(total / k) for k in (3, 4, 6, 10)]
    assert [p.ttft_s for p in answers] == sorted((p.ttft_s for p in answers), reverse=True)
    assert [p.tpot_s for p in answers] == sorted((p.tpot_s for p in answers), reverse=True)
    assert sm.at_rate(total).saturated  # one replica cannot


@pytest.mark.parametrize("engine", ENGINES)
def test_longer_prompts_mean_later_first_tokens(engine):
    ttft = [model(engine, prompt=p).at_rate(2.0).ttft_s for p in (100, 1000, 4000, 8000)]
    assert ttft == sorted(ttft) and ttft[-1] > 2 * ttft[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_more_users_raise_throughput_until_the_batch_limit(engine):
    sm = model(engine, "a100-80gb-sxm")
    rates = [sm.at_concurrency(u).output_tokens_per_s for u in (1, 4, 16, 64, sm.limit)]
    assert rates == sorted(rates)
    beyond = sm.at_concurrency(2 * sm.limit)
    assert beyond.output_tokens_per_s == pytest.approx(rates[-1], rel=1e-6)
    assert beyond.ttft_s > sm.at_concurrency(sm.limit).ttft_s  # the others wait for a slot


def test_a_closed_loop_keeps_its_users_in_flight():
    """Little's law: requests/s x time in the engine = users (steady state)."""
    sm = model("vllm")
    p = sm.at_concurrency(32)
    assert p.requests_per_s * p.e2e_s == pytest.approx(32, rel=0.01)


def test_past_saturation_a_stream_has_no_steady_state_and_a_finite_run_queues():
    sm = model("vllm")
    cap = sm.max_requests_per_s
    assert sm.at_rate(1.5 * cap).saturated and math.isinf(sm.at_rate(1.5 * cap).ttft_s)
    short, long = sm.at_rate(1.5 * cap, requests=200), sm.at_rate(1.5 * cap, requests=2000)
    assert short.saturated and math.isfinite(short.ttft_s)
    assert long.ttft_s > short.ttft_s  # the backlog grows with the run
    assert short.requests_per_s == pytest.approx(cap)


def test_tensor_parallelism_cuts_the_time_per_token():
    one = ServingModel(Workload(resolve_model("llama-3.1-70b"), engine="vllm", quant="fp8",
                                prompt_tokens=500, output_tokens=200, gpus=2, tp=2),
                       get_gpu("h100-sxm"))
    four = ServingModel(Workload(resolve_model("llama-3.1-70b"), engine="vllm", quant="fp8",
                                 prompt_tokens=500, output_tokens=200, gpus=4, tp=4),
                        get_gpu("h100-sxm"))
    assert four.at_rate(0.5).tpot_s < one.at_rate(0.5).tpot_s
    assert four.capacity.sequences > one.capacity.sequences


def test_the_step_model_reduces_to_the_speed_models_decode_step_and_prefill():
    from whichgpu.estimate.speed.hardware import hardware
    from whichgpu.estimate.speed.llm import decode_step, prefill_time

    sm = model("vllm")
    hw = hardware(get_gpu("h100-sxm"))
    w = sm.workload
    per_seq = sm.steps.per_sequence_s  # the fitted CPU cost per running sequence
    for batch in (1, 16, 96):  # grid points: no interpolation
        assert sm.steps.decode(batch) == pytest.approx(
            decode_step(w, hw, batch, 1100).seconds + batch * per_seq)
    pre = prefill_time(w, hw, 1, 1000)
    gpu_only = pre.seconds - pre.parts["fixed-overhead"]  # the step's fixed cost is added back
    assert sm.steps.mixed(0, 1000) - sm.steps.decode_terms(1)[2] == pytest.approx(gpu_only,
                                                                                    rel=0.02)


# ------------------------------------------------------------------ queueing formulas

def test_erlang_c_of_one_server_is_its_utilisation():
    assert erlang_c(1, 0.3) == pytest.approx(0.3)
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)  # textbook M/M/2 at rho 0.5
    assert erlang_c(256, 250) > erlang_c(256, 200) > 0


def test_waits_grow_without_bound_at_saturation():
    assert md1_wait_s(9.0, 0.1) == pytest.approx(0.9 * 0.1 / (2 * 0.1))
    assert math.isinf(md1_wait_s(10.0, 0.1))
    assert math.isinf(slot_wait_s(4, 10.0, 0.5, 1.0))
    assert slot_wait_s(4, 7.9, 0.5, 1.0) > slot_wait_s(4, 6.0, 0.5, 1.0) > 0


def test_fixed_point_finds_the_smallest_root_or_says_there_is_none():
    t, ok = fixed_point(lambda t: 1 + 0.5 * t, 1.0, lambda t: t < 100)
    assert ok and t == pytest.approx(2.0)
    t, ok = fixed_point(lambda t: 1 + 1.5 * t, 1.0, lambda t: t < 100)
    assert not ok
