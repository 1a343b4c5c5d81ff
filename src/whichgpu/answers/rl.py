"""``memory`` and ``speed`` with ``--task grpo|ppo``: the RL post-training plan
(estimate/rl.py) from the request's own settings."""

from __future__ import annotations

from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.requests import Memory, Speed
from whichgpu.errors import InputError
from whichgpu.estimate.rl import RLPlan, plan, settings
from whichgpu.messages import Field, msg
from whichgpu.vocabulary import RLTuning


def rl_plan(q: Memory | Speed, ctx: Context = LOCAL) -> RLPlan:
    """The RL plan a ``memory`` or ``speed`` request asks (``q.task`` is grpo or ppo)."""
    from whichgpu.answers.estimates import card
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.units import parse_count

    config = getattr(q, "config", None)
    if not q.model and not q.params and config is None:
        raise InputError(msg("workload.no_model", "name a model (see 'whichgpu models') or give "
                             "{params}, e.g. 70e9", params=Field("params")))
    if q.lora_adapters:
        raise InputError(msg("rl.lora_adapters", "{field} is for serving, not RL training",
                             field=Field("lora_adapters")))
    spec = ctx.model(q.model, params=q.params, config=config)
    gpus = q.count if isinstance(q, Speed) else q.gpus
    s = settings(
        q.task, tuning=q.tuning, framework=q.framework, generations=q.generations,
        prompts=q.batch,
        prompt_tokens=int(parse_count(q.prompt_tokens, binary=True, what=_PROMPT))
        if q.prompt_tokens else None,
        completion_tokens=int(parse_count(q.completion_tokens, binary=True, what=_COMPLETION))
        if q.completion_tokens else None,
        gpus=gpus, rollout_gpus=q.rollout_gpus, rollout_share=q.rollout_share)
    mine = q.fields("quant", "kv_dtype", "optimizer", "gradient_checkpointing", "lora_rank",
                    "lora_targets", "activation_offloading", "loss", "fp8_training",
                    "host_ram", "host_memory", "host_bandwidth")

    def build(**changes: Any):
        values = {**mine, **changes}
        if values.get("task") == "inference":  # the rollout engine: the checkpoint as served
            values = {k: v for k, v in values.items() if k not in (
                "optimizer", "gradient_checkpointing", "activation_offloading", "loss",
                "fp8_training", "lora_targets")}
            if changes.get("quant") is None:  # QLoRA's 4-bit base is merged to 16 bits
                values["quant"] = None if s.tuning is RLTuning.QLORA else mine.get("quant")
        return build_workload(spec, **values)

    res = card(q.gpu, q.gpu_spec)
    profile = ctx.calibration(q.calibration) if isinstance(q, Speed) else None
    return plan(spec, s, build, res.gpu if res else None, profile=profile)


_PROMPT = "prompt tokens"
_COMPLETION = "completion tokens"
