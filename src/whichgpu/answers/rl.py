"""``memory`` and ``speed`` with ``--task grpo|ppo``: the RL post-training plan
(estimate/rl.py) from the request's own settings; ``recommend`` with it: every priced GPU x
count planned and ranked (advise/rl_ranking.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.inputs.values import said as written
from whichgpu.answers.requests import Memory, Recommend, Speed
from whichgpu.errors import InputError
from whichgpu.estimate.rl import RLPlan, plan, settings
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import RLTuning

if TYPE_CHECKING:
    from whichgpu.advise.rl_ranking import RLExclusion, RLOption
    from whichgpu.catalog.gpus import GPU
    from whichgpu.catalog.prices import OfferSelection
    from whichgpu.currency import RateTable

RLRequest = Memory | Speed | Recommend


def rl_plan(q: Memory | Speed, ctx: Context = LOCAL) -> RLPlan:
    """The RL plan a ``memory`` or ``speed`` request asks (``q.task`` is grpo or ppo)."""
    from whichgpu.catalog.user_gpu import resolve_gpu_arg

    res = resolve_gpu_arg(q.gpu, q.gpu_spec)
    gpus = q.count if isinstance(q, Speed) else q.gpus
    profile = ctx.calibration(q.calibration) if isinstance(q, Speed) else None
    return planner(q, ctx, profile)(res.gpu if res else None, gpus)


def planner(q: RLRequest, ctx: Context = LOCAL, profile: Any = None,
            ) -> Callable[[GPU | None, int], RLPlan]:
    """``plan_on(gpu, gpus)``: the request's RL plan on ``gpus`` of ``gpu`` (None: memory
    only). The model is resolved once, the settings checked at each count."""
    from whichgpu.answers.inputs.workload import build_workload

    config = getattr(q, "config", None)
    if not q.model and not q.params and config is None:
        raise InputError(msg("workload.no_model", "name a model (see 'whichgpu models') or give "
                             "{params}, e.g. 70e9", params=Field("params")))
    if q.lora_adapters:
        raise InputError(msg("rl.lora_adapters", "{field} is for serving, not RL training",
                             field=Field("lora_adapters")))
    spec = ctx.model(q.model, params=q.params, config=config)
    prompt = int(q.prompt_tokens) if q.prompt_tokens is not None else None  # read as it validated
    # read as the request validated (answers/inputs/values.py CompletionTokens)
    completion = int(q.completion_tokens) if q.completion_tokens is not None else None
    mine = q.fields("quant", "kv_dtype", "optimizer", "gradient_checkpointing", "lora_rank",
                    "lora_targets", "activation_offloading", "loss", "fp8_training",
                    "host_ram", "host_memory", "host_bandwidth")

    def plan_on(gpu: GPU | None, gpus: int) -> RLPlan:
        s = settings(
            q.task, tuning=q.tuning, framework=q.framework, generations=q.generations,
            prompts=q.batch, prompt_tokens=prompt, completion_tokens=completion,
            gpus=gpus, rollout_gpus=q.rollout_gpus, rollout_share=q.rollout_share,
            rollout_engine=q.rollout_engine)

        def build(**changes: Any):
            values = {**mine, **changes}
            if values.get("task") == "inference":  # the rollout engine: the checkpoint served
                values = {k: v for k, v in values.items() if k not in (
                    "optimizer", "gradient_checkpointing", "activation_offloading", "loss",
                    "fp8_training", "lora_targets")}
                if changes.get("quant") is None:  # QLoRA's 4-bit base is merged to 16 bits
                    values["quant"] = None if s.tuning is RLTuning.QLORA else mine.get("quant")
            return build_workload(spec, **values)

        return plan(spec, s, build, gpu, profile=profile)

    return plan_on


#: ``recommend`` fields that size a serving or generation job, not an RL one
_NOT_RL = ("tokens", "images", "videos", "train_tokens", "examples", "users",
           "tokens_per_s_each", "tokens_per_day", "concurrency", "requests_per_s", "ttft",
           "tpot", "export", "vs_api", "disaggregate", "power_budget")


@dataclass(frozen=True)
class RLRecommendAnswer:
    """``whichgpu recommend --task grpo|ppo``: the GPU x count options that hold the RL job,
    ranked by cost (or time) per step, the ones that do not and why, and the best one's plan."""

    request: Recommend
    options: tuple[RLOption, ...]
    excluded: tuple[RLExclusion, ...]
    selection: OfferSelection
    rates: RateTable
    explanation: tuple[Message, ...]
    assumptions: tuple[Message, ...] = ()
    notes: tuple[Message | str, ...] = field(default_factory=tuple)

    kind = "rl"

    @property
    def best(self) -> RLOption | None:
        return self.options[0] if self.options else None

    def shown(self) -> list[RLOption]:
        top = self.request.top
        return list(self.options[:top] if top else self.options)

    def to_json(self) -> dict[str, Any]:
        best = self.best
        return {
            "kind": "rl", "task": str(self.request.task), "model": best.plan.model
            if best else self.request.model,
            "ranking": str(self.request.objective),
            "explanation": [str(m) for m in self.explanation],
            "options": [o.to_json(i + 1) for i, o in enumerate(self.shown())],
            "excluded": [e.to_json() for e in self.excluded],
            "best_plan": best.plan.to_json() if best else None,
            "assumptions": [str(a) for a in self.assumptions],
            "notes": [str(n) for n in self.notes],
            "prices": self.selection.to_json(),
        }


def recommend_rl(q: Recommend, ctx: Context = LOCAL) -> RLRecommendAnswer:
    """Every priced GPU x count (1, 2, 4, 8) planned for the RL job (policy, reference, critic
    and the rollout engine: memory per GPU and time per step), ranked by cost per step."""
    from whichgpu.advise.rl_ranking import explain_rl, rank_rl
    from whichgpu.answers.inputs.job import apply_currency, only_gpus, only_notes
    from whichgpu.currency import rates_from

    given = [name for name in _NOT_RL
             if written(getattr(q, name, None)) not in (None, False, 0, "")]
    if given:
        raise InputError(msg("rl.rank.not_for_rl", "{field} does not apply to RL post-training "
                             "({task}): give {steps} (optimizer steps) or nothing, and the RL "
                             "settings", field=Field(given[0]), task=str(q.task),
                             steps=Field("steps")))
    if q.gpu or q.gpu_spec:
        raise InputError(msg("rl.rank.own_card", "your own card ({field}) is not set beside the "
                             "rentals for RL post-training yet: the memory and speed questions "
                             "answer {task} for it", field=Field("gpu" if q.gpu else "gpu_spec"),
                             task=str(q.task)))
    steps = None
    if q.steps is not None:  # read as the request validated (answers/inputs/values.WorkCount)
        steps = int(q.steps)
        if steps < 1:
            raise InputError(msg("rl.rank.steps", "{field} must be at least 1, got {v!r}",
                                 field=Field("steps"), v=written(q.steps)))
    gpus = only_gpus(q.only)
    rates = rates_from(q.rate)  # priced as answers/advice.priced prices every job
    selection = ctx.offers(q.prices, q.max_age, cheapest_only=True,
                           gpus=[g.id for g in gpus] if gpus else None)
    if q.currency:
        selection = apply_currency(selection, q.currency, rates)
    plan_on = planner(q, ctx, ctx.calibration(q.calibration))
    options, excluded = rank_rl(plan_on, selection.offers, gpus=gpus, max_gpus=q.max_gpus,
                                spot=False, objective=q.objective, steps=steps)
    said = explain_rl(options, excluded, q.objective)
    assumptions = [msg("rl.rank.machines", "each size priced as a machine sold with that many "
                       "GPUs (its cheapest offer); a size no offer of this price list sells "
                       "is not ranked"),
                   *(options[0].plan.assumptions if options else ())]
    notes: list[Message | str] = [*only_notes(q.only)]
    # not applied yet: on-demand prices only (spot would need the interruption cost per step)
    skipped = [n for n in ("deadline", "budget", "max_price_per_hour", "spot")
               if getattr(q, n, None)]
    if skipped:
        notes.append(msg("rl.rank.unused", "{field} is not applied to the RL ranking yet "
                         "(compare the options' time and cost yourself)",
                         field=Field(skipped[0])))
    return RLRecommendAnswer(q, tuple(options), tuple(excluded), selection, rates,
                             tuple(said), tuple(assumptions), tuple(notes))
