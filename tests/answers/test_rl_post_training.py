"""RL post-training (--task grpo|ppo): the plan's memory parts, its time per step and the
refusals, on every surface (estimate/rl.py, answers/rl.py)."""

from __future__ import annotations

import json

import pytest

from whichgpu.answers.estimates import memory, recommend_workload, speed
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.answers.requests import Memory, Recommend, Speed
from whichgpu.catalog.gpus import get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.memory.weights import workload_weight_bytes
from whichgpu.estimate.rl import frameworks
from whichgpu.vocabulary import RLFramework, Task


def _parts(plan) -> dict[str, int]:
    return {p.name: p.bytes for p in (*plan.training_parts, *plan.rollout_parts)}


def test_lora_grpo_has_no_reference_model_even_with_a_kl_term():
    plan = memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO, framework="verl")).rl
    assert plan.settings.kl  # verl's GRPO keeps a KL term ...
    assert "reference" not in _parts(plan)  # ... against the base with the adapter disabled
    assert any("adapter disabled" in str(a) for a in plan.assumptions)


def test_full_fine_tuning_with_kl_holds_the_16_bit_reference_weights():
    plan = memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO, framework="verl",
                         tuning="full-ft")).rl
    bf16 = workload_weight_bytes(build_workload("qwen2.5-1.5b", quant="bf16")).total
    assert _parts(plan)["reference"] == bf16


def test_trl_loads_no_reference_by_default():
    plan = memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO, tuning="full-ft")).rl
    assert not plan.settings.kl and "reference" not in _parts(plan)


def test_ppo_adds_a_critic_and_a_reward_model():
    grpo = _parts(memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO)).rl)
    ppo = _parts(memory(Memory(model="qwen2.5-1.5b", task=Task.PPO)).rl)
    assert "critic" not in grpo and "reward_model" not in grpo
    assert ppo["critic"] > 0 and ppo["reward_model"] > 0
    assert ppo["policy_training"] == grpo["policy_training"]


def test_more_generations_and_longer_completions_need_more_memory():
    def total(**kw) -> int:
        return memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO, rollout_engine="vllm",
                             **kw)).rl.peak_training_gpu_bytes

    assert total(generations=16) > total(generations=8)
    assert total(completion_tokens="2k") > total(completion_tokens="256")


def test_rollout_kv_cache_is_the_serving_models_for_the_group():
    plan = memory(Memory(model="llama-3.1-8b", task=Task.GRPO, generations=8,
                         prompt_tokens="512", completion_tokens="512",
                         rollout_engine="vllm")).rl
    serving = build_workload("llama-3.1-8b", engine="vllm", batch=8, context="1024")
    assert _parts(plan)["rollout_kv_cache"] == estimate_memory(serving).term("kv_cache")


def test_unsloth_rollouts_share_the_training_weights():
    unsloth = _parts(memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO,
                                   framework="unsloth")).rl)
    trl = _parts(memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO,
                               rollout_engine="vllm")).rl)
    assert unsloth["rollout_weights"] == 0 and trl["rollout_weights"] > 0


def test_colocated_trl_peak_is_training_plus_the_engines_share():
    gpu = get_gpu("h100-sxm")
    plan = memory(Memory(model="qwen2.5-1.5b", task=Task.GRPO, gpu="h100-sxm",
                         rollout_engine="vllm")).rl
    training = sum(p.bytes for p in plan.training_parts)
    assert plan.peak_training_gpu_bytes == training + int(0.3 * gpu.memory_bytes)


def test_step_time_is_rollout_plus_training_plus_sync_and_names_the_largest():
    plan = speed(Speed(model="qwen2.5-1.5b", task=Task.GRPO, gpu="h100-sxm")).rl
    t = {k: r.typical for k, r in plan.times.items()}
    assert t["step_s"] == pytest.approx(t["rollout_s"] + t["training_s"] + t["sync_s"])
    parts = {"rollout": t["rollout_s"], "training": t["training_s"],
             "weight_sync": t["sync_s"]}
    assert plan.dominant == max(parts, key=parts.__getitem__)
    assert all(r.low <= r.typical <= r.high for r in plan.times.values())


def test_ppo_training_takes_longer_than_grpo_training():
    def training(task: Task) -> float:
        return speed(Speed(model="qwen2.5-1.5b", task=task, gpu="h100-sxm")).rl \
            .times["training_s"].typical

    assert training(Task.PPO) > 2 * training(Task.GRPO)  # critic fwd+bwd, reward fwd


def test_separate_rollout_gpus_and_the_split_suggested():
    plan = speed(Speed(model="llama-3.1-8b", task=Task.GRPO, framework="openrlhf",
                       gpu="h100-sxm", count=8)).rl
    assert plan.settings.rollout_gpus == 4 and plan.settings.training_gpus == 4
    assert plan.peak_rollout_gpu_bytes is not None
    assert 1 <= plan.suggested_rollout_gpus <= 7


def test_every_framework_names_its_sources():
    assert set(frameworks()) == set(RLFramework)
    for fw in frameworks().values():
        assert fw.sources and all("http" in s for s in fw.sources)
        assert 0 < fw.rollout_share < 1


@pytest.mark.parametrize("kw, msg_id", [
    (dict(rollout_gpus=1, count=1, rollout_engine="vllm"), "rl.rollout_gpus"),
    (dict(framework="deepspeed-chat"), "rl.framework"),
    (dict(framework="unsloth", rollout_gpus=1, count=2), "rl.shared_separate"),
])
def test_impossible_rl_settings_are_input_errors(kw, msg_id):
    with pytest.raises(InputError) as exc:
        speed(Speed(model="qwen2.5-1.5b", task=Task.GRPO, gpu="h100-sxm", **kw))
    assert exc.value.args[0].id == msg_id


def test_one_workload_is_refused_for_rl_the_ranking_answers_it():
    with pytest.raises(InputError) as exc:
        recommend_workload(Recommend(model="qwen2.5-1.5b", task=Task.GRPO, steps="10"))
    assert exc.value.args[0].id == "rl.not_ranked"


def test_cli_json_and_usage_errors(cli):
    r = cli("speed", "qwen2.5-1.5b", "--task", "grpo", "--gpu", "h100-sxm", "--generations",
            "4", "--completion-tokens", "512", "--json")
    assert r.code == 0, r
    data = json.loads(r.out)
    assert data["generations"] == 4 and data["completion_tokens"] == 512
    assert set(data["step_s"]) == {"low", "typical", "high"}
    bad = cli("memory", "qwen2.5-1.5b", "--task", "grpo", "--rollout-share", "1.5")
    assert bad.code == 2 and bad.err.startswith("error: "), bad
    table = cli("memory", "qwen2.5-1.5b", "--task", "grpo", "--gpu", "rtx-4090")
    assert table.code == 0 and "per training GPU" in table.out, table


def test_rest_answers_rl_and_ranks_it_in_recommend(web):
    ok = web.get("/api/v1/memory", params={"model": "qwen2.5-1.5b", "task": "ppo",
                                            "gpu": "rtx-4090"})
    assert ok.status_code == 200
    names = {p["name"] for p in ok.json()["memory"]["training_parts"]}
    assert {"policy_training", "critic", "reward_model"} <= names
    ranked = web.get("/api/v1/recommend", params={"model": "qwen2.5-1.5b", "task": "grpo",
                                                   "steps": "10"})
    assert ranked.status_code == 200 and ranked.json()["kind"] == "rl"


def test_the_mcp_tools_answer_rl_with_a_summary_of_the_plan():
    import asyncio

    from whichgpu.agents import tools
    from whichgpu.agents.local import LocalSurface

    answer, summary = asyncio.run(tools.call(LocalSurface(), "speed", {
        "model": "qwen2.5-1.5b", "task": "grpo", "gpu": "h100-sxm"}))
    assert answer.data["task"] == "grpo" and "step_s" in answer.data
    assert "per training GPU" in summary and "dominates" in summary


def test_the_memory_page_draws_the_rl_plan_instead_of_failing(web):
    r = web.get("/memory", params={"model": "qwen2.5-1.5b", "task": "grpo"})
    assert r.status_code == 200 and 'data-part="policy_training"' in r.text
