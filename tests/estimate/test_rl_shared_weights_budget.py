"""RL with a rollout engine that reads the training weights (Unsloth): vLLM's
gpu_memory_utilization budget holds those weights, so they are counted once
(estimate/rl.py; vllm-project/vllm#12330's start-up log)."""

from __future__ import annotations

from whichgpu.answers.estimates import memory
from whichgpu.answers.requests import Memory
from whichgpu.catalog.gpus import get_gpu
from whichgpu.estimate.rl import frameworks
from whichgpu.vocabulary import RLFramework, RLTuning, Task


def _plan(model: str, gpu: str, **kw):
    return memory(Memory(model=model, task=Task.GRPO, gpu=gpu, **kw)).rl


def _engine_weights(model: str, tuning: RLTuning) -> int:
    """The bytes of weights vLLM holds: the model served 4-bit (QLoRA) or 16-bit."""
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.estimate.memory import estimate_memory

    quant = "nf4" if tuning is RLTuning.QLORA else None
    return estimate_memory(build_workload(model, engine="vllm", quant=quant,
                                          batch=1)).term("weights")


def test_unsloths_free_colab_llama_8b_grpo_fits_a_t4():
    # unsloth.ai/blog/r1-reasoning (2025-02-06): 'With 15GB VRAM ... up to 15B parameters like
    # Llama 3.1 (8B)', its free Colab notebook on a 16 GB T4 with 4-bit (QLoRA) loading.
    # Before the fix the tool refused it: 16.73 GB of 16.1 (the weights counted twice).
    plan = _plan("llama-3.1-8b", "t4", framework="unsloth", tuning="qlora")
    assert plan.fits, plan.peak_training_gpu_bytes / 1e9


def test_unsloth_grpo_of_a_7b_model_fits_a_4090_by_default():
    # the same release: Qwen2.5 (7B) within 15 GB; Unsloth loads 4-bit unless told otherwise
    # (FastLanguageModel.from_pretrained(load_in_4bit=True)). Before: 'does NOT fit: 30.4 GB'.
    plan = _plan("qwen2.5-7b", "rtx-4090", framework="unsloth")
    assert plan.settings.tuning is RLTuning.QLORA
    assert plan.fits
    assert plan.peak_training_gpu_bytes < 16e9  # 15 GB claimed; the model says 15.0


def test_shared_weights_are_counted_once_inside_the_engines_share():
    gpu = get_gpu("rtx-4090")
    plan = _plan("qwen2.5-7b", "rtx-4090", framework="unsloth")
    training = sum(p.bytes for p in plan.training_parts)
    rollout_need = sum(p.bytes for p in plan.rollout_parts)
    share = int(0.5 * gpu.memory_bytes)
    weights = _engine_weights("qwen2.5-7b", RLTuning.QLORA)
    assert weights > 4e9  # a 7B model's 4-bit weights
    assert plan.peak_training_gpu_bytes == training + max(share - weights, rollout_need)
    assert any("shares with training" in str(a) for a in plan.assumptions)


def test_a_share_below_the_weights_says_vllm_would_not_start():
    # 16-bit LoRA of a 7B model: 15 GB of bf16 weights in half of a 24 GB card
    plan = _plan("qwen2.5-7b", "rtx-4090", framework="unsloth", tuning="lora")
    said = [str(w) for w in plan.warnings]
    assert any("would not start" in w for w in said), said
    share = int(0.5 * get_gpu("rtx-4090").memory_bytes)
    training = sum(p.bytes for p in plan.training_parts)
    assert plan.peak_training_gpu_bytes == training + sum(p.bytes for p in plan.rollout_parts)
    weights = _engine_weights("qwen2.5-7b", RLTuning.LORA)
    assert weights > share  # 15 GB of bf16 weights, 12 GB of share
    assert plan.peak_training_gpu_bytes > training + share - weights


def test_engines_with_their_own_weights_still_add_the_whole_share():
    # TRL (with use_vllm) and verl load a second copy into vLLM: the share holds that copy,
    # nothing is shared
    gpu = get_gpu("h100-sxm")
    trl = _plan("qwen2.5-7b", "h100-sxm", rollout_engine="vllm")
    training = sum(p.bytes for p in trl.training_parts)
    assert trl.peak_training_gpu_bytes == training + int(0.3 * gpu.memory_bytes)
    assert not frameworks()[RLFramework.VERL].shared_weights
    assert not frameworks()[RLFramework.TRL].shared_weights


def test_only_unsloth_defaults_to_qlora():
    fws = frameworks()
    assert fws[RLFramework.UNSLOTH].default_tuning is RLTuning.QLORA
    assert {fw.default_tuning for k, fw in fws.items() if k is not RLFramework.UNSLOTH} \
        == {RLTuning.LORA}
