"""Many LoRA adapters on one base (--lora-adapters, --lora-rank): vLLM's slots from the
model's real linears, how many fit, the throughput cost, and the published figures."""

from __future__ import annotations

import pytest

from whichgpu.answers.estimates import memory, speed
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.answers.requests import Memory, Speed
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.multi_lora import cost_range, lora_plan, slot_rank

# Llama 3.1 8B's config.json: hidden 4096, 8 KV heads x 128 = 1024, intermediate 14336, 32
# layers; q, k, v, o, gate, up, down: sum of (in + out) features per layer
LLAMA31_8B_IN_OUT = 32 * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096)
                          + 2 * (4096 + 14336) + (14336 + 4096))


def test_a_slot_is_max_lora_rank_times_every_linear_in_and_out_in_16_bits():
    w = build_workload("llama-3.1-8b", engine="vllm", lora_adapters=10, lora_rank=16,
                       batch=4, lora_targets="q_proj,v_proj")
    plan = lora_plan(w)
    assert plan.slot_bytes == 16 * LLAMA31_8B_IN_OUT * 2  # every linear, not only q and v
    assert plan.adapter_bytes == 16 * 32 * ((4096 + 4096) + (4096 + 1024)) * 2  # own targets
    assert plan.max_loras == 4  # no more distinct adapters in a batch than sequences
    assert plan.gpu_bytes == 4 * plan.slot_bytes
    assert plan.host_bytes == 10 * plan.adapter_bytes and plan.max_cpu_loras == 10


def test_slots_are_sized_at_the_next_rank_vllm_offers():
    assert slot_rank(16) == 16 and slot_rank(20) == 32 and slot_rank(300) == 320
    with pytest.raises(InputError):
        slot_rank(1024)


def test_the_slots_are_a_memory_term_that_takes_room_from_the_kv_cache():
    base = build_workload("llama-3.1-8b", engine="vllm", batch=16)
    many = base.with_(lora_adapters=100)
    e0, e1 = estimate_memory(base), estimate_memory(many)
    assert e1.term("lora_adapters") == lora_plan(many).gpu_bytes
    assert e0.term("lora_adapters") == 0
    assert e1.total_bytes > e0.total_bytes + e1.term("lora_adapters") - 1


def test_fewer_slots_fit_beside_a_larger_kv_cache():
    def fit(batch: int) -> int:
        a = memory(Memory(model="llama-3.1-8b", engine="vllm", lora_adapters=64,
                          batch=batch, gpu="l40s"))
        return a.multi_lora["max_loras_that_fit"]

    assert fit(8) > fit(32) > 0


def test_serving_rates_lose_the_published_cost():
    cost = cost_range()
    q = dict(model="llama-3.1-8b", engine="vllm", gpu="h100-sxm", batch=16)
    plain = speed(Speed(**q)).answer.estimate.rates["output_tokens_per_s"]
    slowed = speed(Speed(lora_adapters=20, **q)).answer.estimate.rates["output_tokens_per_s"]
    assert slowed.typical == pytest.approx(plain.typical * (1 - cost.typical))
    assert slowed.low == pytest.approx(plain.low * (1 - cost.high))
    assert slowed.high == pytest.approx(plain.high * (1 - cost.low))


@pytest.mark.parametrize("kw, msg_id", [
    (dict(engine="llamacpp"), "lora.engine"),
    (dict(task="lora"), "workload.lora_adapters_inference"),
])
def test_adapters_outside_vllm_and_sglang_serving_are_refused(kw, msg_id):
    with pytest.raises(InputError) as exc:
        memory(Memory(model="llama-3.1-8b", lora_adapters=3, **kw))
    assert exc.value.args[0].id == msg_id


def test_published_costs_set_the_range_and_the_holdout_is_reported():
    from whichgpu.estimate.validation.rl import lora_rows, rl_rows

    rows = lora_rows()
    assert all(r.source_url.startswith("https://") for r in rows)
    assert all(r.inside for r in rows if r.split == "fit")  # the range covers its own data
    assert any(r.split == "holdout" for r in rows)
    rl = rl_rows()
    assert rl and all(r.predicted > 0 for r in rl)


def test_advisor_form_has_the_adapters_control_and_recommend_counts_them(web):
    page = web.get("/")
    assert 'name="lora_adapters"' in page.text
    r = web.get("/api/v1/recommend", params={"model": "llama-3.1-8b", "tokens": "1M",
                                             "engine": "vllm", "lora_adapters": "200",
                                             "prices": "vramfarm-2026-11"})
    assert r.status_code == 200


def test_max_throughput_loses_the_same_cost():
    cost = cost_range()
    q = dict(model="llama-3.1-8b", engine="vllm", gpu="h100-sxm", max_throughput=True)
    plain = speed(Speed(**q)).saturation
    slowed = speed(Speed(lora_adapters=8, **q)).saturation
    assert slowed["throughput_tokens_per_s"]["typical"] == pytest.approx(
        plain["throughput_tokens_per_s"]["typical"] * (1 - cost.typical), rel=1e-4)
    assert slowed["tpot_s"]["typical"] > plain["tpot_s"]["typical"]
