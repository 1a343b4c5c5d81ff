"""``memory`` and ``speed``: the answers, as the command line, the REST API and the pages
give them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.inputs.from_request import workload
from whichgpu.answers.inputs.workload import SpeedAnswer, speed_answer
from whichgpu.answers.request import Request
from whichgpu.answers.requests import Memory, Recommend, Speed, Workload
from whichgpu.catalog.gpus import GPU, Resolution
from whichgpu.catalog.user_gpu import resolve_gpu_arg
from whichgpu.errors import InputError
from whichgpu.estimate.memory.report import MemoryReport, memory_report
from whichgpu.estimate.workload import Workload as Job
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import Task

if TYPE_CHECKING:  # a memory question loads neither the mixed cards nor the speed model
    from whichgpu.answers.mixed import MixedCardsAnswer

Q = TypeVar("Q", Memory, Speed)


def approximate_note(job: Job) -> Message | None:
    """A generic model from a bare size is not a real model: say so."""
    if not job.model.approximate:
        return None
    return msg("model.approximate", "{model} is an approximation from a bare size, not a real "
               "model: name the model for exact figures", model=job.model.name)


def card(gpu: str | None, spec: str | None) -> Resolution | None:
    """``--gpu`` (a catalog name, or a bare size such as 12GB) and/or ``--gpu-spec``."""
    return resolve_gpu_arg(gpu, spec)


@dataclass(frozen=True)
class MemoryAnswer:
    """``whichgpu memory``: the report, and what was said about the card asked."""

    request: Memory
    report: MemoryReport
    notes: tuple[str, ...] = ()
    multi_lora: dict[str, Any] | None = None  # --lora-adapters: the slots, and how many fit
    rl: Any = None  # --task grpo|ppo: the RL plan (answers/rl.py)
    alternative: Any = None  # answers/offload_hint.OffloadAlternative: llama.cpp's offload
    faster: Any = None  # answers/engine_hint.FasterEngine: an engine above the default's range
    compiled: Any = None  # answers/precision_hint.CompiledPrecision: FP8 diffusion, compiled

    def to_json(self) -> dict[str, Any]:
        if self.rl is not None:
            return self.rl.to_json()
        data = self.report.to_json()
        if self.multi_lora is not None:
            data["multi_lora"] = self.multi_lora
        if self.alternative is not None:
            data["offload_alternative"] = self.alternative.to_json()
        if self.faster is not None:
            data["faster_engine"] = self.faster.to_json()
        if self.compiled is not None:
            data["compiled_alternative"] = self.compiled.to_json()
        return data


def memory(q: Memory, ctx: Context = LOCAL) -> MemoryAnswer | MixedCardsAnswer:
    """Peak memory per GPU as named terms, the GPUs that hold it, and what would make it fit
    (for a list of different cards: the split and each card's memory)."""
    from dataclasses import replace

    if q.task.is_rl:  # GRPO / PPO: the RL plan (answers/rl.py), not one workload
        from whichgpu.answers.rl import rl_plan

        rl = rl_plan(q, ctx)
        return MemoryAnswer(q, None, rl=rl)  # type: ignore[arg-type]
    mix = _mixed_or_same(q, ctx)
    if not isinstance(mix, Request):  # a list of different cards: the mixed-cards answer
        return mix
    q = mix
    only = None
    if q.only:  # checked before the estimate: a typo is said at once
        from whichgpu.answers.inputs.job import only_gpus  # (the advise package only when asked)

        only = only_gpus(q.only)
    w = workload(q, ctx)
    res = card(q.gpu, q.gpu_spec)
    alternative = None  # llama.cpp's offload, when the engine chosen cannot fit the cards
    report = memory_report(w, res.gpu if res else None)
    notes = [res.note] if res and res.note else []
    if res is not None and report.target is not None and not report.target.fits \
            and report.offload is None:
        spill = with_llamacpp(q, ctx, w, q.gpus)  # --host-ram given: llama.cpp may spill
        if spill is not None:
            other = memory_report(spill, res.gpu)
            if other.offload is not None:
                report = other
                notes.append(str(llamacpp_considered(w)))
        if report.offload is None:  # no host RAM given: say llama.cpp's offload and its speed
            from whichgpu.answers.offload_hint import offload_alternative

            alternative = offload_alternative(q, ctx, w, res.gpu, q.gpus)
            if alternative is not None:
                notes.append(alternative.describe())
    if only is not None:
        ids = {g.id for g in only}
        report = replace(report, fits=[f for f in report.fits if f.gpu.id in ids])
    lora = _multi_lora(w, report, res.gpu if res else None) if w.lora_adapters else None
    return MemoryAnswer(q, report, tuple(notes), multi_lora=lora, alternative=alternative)


def _multi_lora(w: Job, report: MemoryReport, gpu: GPU | None) -> dict[str, Any]:
    """The adapters' engine settings; on a named GPU, how many adapter slots (max_loras)
    fit beside the KV cache of this concurrency."""
    import math

    from whichgpu.estimate.multi_lora import lora_plan, slots_that_fit

    plan = lora_plan(w)
    data = plan.to_json()
    if gpu is not None:
        from whichgpu.estimate.constants import memory_value

        total = report.estimate.total_bytes
        share = float(memory_value("vllm_gpu_memory_utilization"))  # slots inside the share
        free = (gpu.usable_memory_bytes - total) * share
        data["gpu"] = gpu.id
        room = plan.max_loras + (slots_that_fit(plan, free) if free >= 0
                                 else -math.ceil(-free / max(plan.slot_bytes, 1)))
        data["max_loras_that_fit"] = max(0, room)
        data["all_adapters_in_one_batch"] = room >= plan.adapters
    return data


def with_llamacpp(q: Workload, ctx: Context, w: Job, count: int) -> Job | None:
    """The job on llama.cpp when the person gave their host RAM and no engine, and the
    engine chosen for them cannot keep weights in host RAM (None otherwise, or when llama.cpp
    cannot run the job as asked, e.g. an AWQ checkpoint)."""
    from whichgpu.estimate.memory.offload_plan import supports_offload
    from whichgpu.vocabulary import Engine

    if q.engine is not None or q.host_ram is None or w.task != Task.INFERENCE or w.is_diffusion:
        return None
    if supports_offload(w):
        return None
    try:
        return workload(q, ctx, gpus=count, engine=Engine.LLAMACPP)
    except InputError:
        return None


def llamacpp_considered(w: Job) -> Message:
    return msg("offload.host_ram_llamacpp", "it does not fit the GPU alone and {engine} keeps "
               "every weight on the GPU; since the host RAM is given, llama.cpp's offload to "
               "host RAM is answered instead ({flag} to choose an engine)",
               engine=w.engine_name, flag=Field("engine"))


def follow_offload(q: Workload, ctx: Context, w: Job, gpu: GPU, count: int
                   ) -> tuple[Job, Message] | None:
    """The llama.cpp layout 'whichgpu memory' finds for a job that does not fit ``gpu``
    whole (layers or MoE experts in host RAM), so that speed answers the same plan; None when
    there is none."""
    from whichgpu.estimate.memory.offload_plan import offload_plan, supports_offload

    spill = w if supports_offload(w) else with_llamacpp(q, ctx, w, count)
    if spill is None:
        return None
    plan = offload_plan(spill, gpu, count)
    if plan is None or not plan.host_ok:  # no layout, or more than the host RAM holds
        return None
    said = msg("speed.follows_offload", "it does not fit {gpu} whole: this is the speed of "
               "llama.cpp's offload to host RAM, as the memory answer lays it out: {plan}",
               gpu=gpu.id, plan=plan.describe())
    if spill is not w:
        said = msg("speed.follows_offload.engine", "{why}; {plan}", why=llamacpp_considered(w),
                   plan=said)
    return plan.workload, said


@dataclass(frozen=True)
class SpeedResult:
    """``whichgpu speed``: the estimate (or why it does not fit), or with
    ``--max-throughput`` the serving model's saturation point."""

    request: Speed
    workload: Job
    gpu: GPU
    answer: SpeedAnswer | None = None
    saturation: dict[str, Any] | None = None  # speed --max-throughput
    notes: tuple[str, ...] = ()
    rl: Any = None  # --task grpo|ppo: the RL plan with its time per step (answers/rl.py)
    energy: Any = None  # estimate/energy.Energy: joules per token or image, board power
    alternative: Any = None  # answers/offload_hint.OffloadAlternative: llama.cpp's offload
    faster: Any = None  # answers/engine_hint.FasterEngine: an engine above the default's range
    compiled: Any = None  # answers/precision_hint.CompiledPrecision: FP8 diffusion, compiled

    def to_json(self) -> dict[str, Any]:
        if self.rl is not None:
            return self.rl.to_json()
        if self.saturation is not None:
            return self.saturation
        assert self.answer is not None
        data = self.answer.to_json()
        if self.energy is not None:
            data["energy"] = self.energy.to_json()
        # Explicit: a job that cannot run on the card has no speed, and says so here.
        data.setdefault("status", "ok" if self.answer.estimate is not None else "does_not_fit")
        data.setdefault("notes", [str(n) for n in self.notes])
        if self.alternative is not None:
            data["offload_alternative"] = self.alternative.to_json()
        if self.faster is not None:
            data["faster_engine"] = self.faster.to_json()
        if self.compiled is not None:
            data["compiled_alternative"] = self.compiled.to_json()
        return data


def speed(q: Speed, ctx: Context = LOCAL) -> SpeedResult | MixedCardsAnswer:
    """Throughput on one GPU configuration, low / typical / high, and what bounds it (for a
    list of different cards: the speed of the mix)."""
    if q.kernel_db is not None:  # issue 28: --kernel-db / --no-kernel-db for this request
        from whichgpu.estimate.speed.kernel_db import as_asked

        with as_asked(q.kernel_db):
            return speed(q.model_copy(update={"kernel_db": None}), ctx)
    mix = _mixed_or_same(q, ctx)
    if not isinstance(mix, Request):  # a list of different cards: the mixed-cards answer
        return mix
    q = mix
    res = card(q.gpu, q.gpu_spec)
    if res is None:
        raise InputError(msg("speed.needs_gpu", "speed needs a GPU: {gpu} (e.g. {example}) or "
                             "{spec} memory=...,bandwidth=...,fp16=...", gpu=Field("gpu", "ID"),
                             example=Field("gpu", "rtx-4090"), spec=Field("gpu_spec")))
    if q.task.is_rl:  # GRPO / PPO: memory and time per step (answers/rl.py)
        from whichgpu.answers.rl import rl_plan

        rl = rl_plan(q, ctx)
        return SpeedResult(q, None, res.gpu, rl=rl, notes=tuple(  # type: ignore[arg-type]
            n for n in (res.note,) if n))
    training = q.task.is_training  # steps: optimizer steps to time, not diffusion steps
    w = workload(q, ctx, gpus=q.count, steps=None if training else q.steps)
    profile = ctx.calibration(q.calibration)
    notes = tuple(n for n in (res.note, approximate_note(w)) if n)
    if q.max_throughput:
        from whichgpu.estimate.speed.serving_answers import max_throughput_answer

        saturation = max_throughput_answer(w, res.gpu, q.count, profile=profile)
        if w.lora_adapters:  # the adapters' published throughput cost (estimate/multi_lora)
            from whichgpu.estimate.multi_lora import apply_cost_to_saturation

            saturation = apply_cost_to_saturation(saturation)
        return SpeedResult(q, w, res.gpu, saturation=saturation, notes=notes)
    if q.requests_per_s is not None:  # issue 28: percentiles at a request rate (simulated)
        from whichgpu.estimate.speed.serving_answers import traffic_answer

        # the rate and the lengths were read as the request validated (answers/inputs/values)
        traffic = traffic_answer(w, res.gpu, q.count, float(q.requests_per_s),
                                 q.lengths.asked if q.lengths is not None else None,
                                 q.prefix_cache_hit, profile=profile)
        if w.lora_adapters:  # flaws10: the adapters' cost said, not dropped unsaid
            from whichgpu.estimate.multi_lora import cost_left_out

            traffic = {**traffic, "assumptions": [*traffic["assumptions"], cost_left_out()]}
        return SpeedResult(q, w, res.gpu, saturation=traffic, notes=notes)
    alternative = None  # llama.cpp's offload, when the engine chosen cannot fit the cards
    answer = speed_answer(w, res.gpu, q.count, profile=profile, framework=w.framework,
                          compile=q.compile, steps=q.steps if training else None,
                          train_tokens=q.train_tokens)
    if answer.estimate is None and not training:  # the plan memory finds, if there is one
        followed = follow_offload(q, ctx, w, res.gpu, q.count)
        if followed is not None:
            planned, said = followed
            other = speed_answer(planned, res.gpu, q.count, profile=profile,
                                 framework=planned.framework, compile=q.compile)
            if other.estimate is not None:
                w, answer, notes = planned, other, (*notes, said)
        else:  # no engine named, and the chosen one cannot offload: say llama.cpp's
            from whichgpu.answers.offload_hint import offload_alternative

            alternative = offload_alternative(q, ctx, w, res.gpu, q.count, profile=profile)
            if alternative is not None:
                notes = (*notes, alternative.describe())
    faster = None  # flaws8 4: another engine clearly faster than the one picked by default
    if answer.estimate is not None and not training:
        from whichgpu.answers.engine_hint import faster_engine

        faster = faster_engine(q, ctx, w, res.gpu, q.count, answer.estimate, profile=profile)
        if faster is not None:
            notes = (*notes, faster.describe())
    compiled = None  # flaws8 5: quantized diffusion weights computed at 16 bits
    if answer.estimate is not None and not training:
        from whichgpu.answers.precision_hint import compiled_precision

        compiled = compiled_precision(w, res.gpu, q.count, answer.estimate, q.compile,
                                      profile=profile)
        if compiled is not None:
            notes = (*notes, compiled.describe())
    answer, energy = with_energy(answer, res.gpu, q.count, q.power_cap)
    return SpeedResult(q, w, res.gpu, answer, notes=notes, energy=energy,
                       alternative=alternative, faster=faster, compiled=compiled)


def with_energy(answer: SpeedAnswer, gpu: GPU, count: int, power_cap: float | None
                ) -> tuple[SpeedAnswer, Any]:
    """The answer at the power cap (its rates slowed by the published power-limit curves) and
    its energy per token or image; without a TDP, or without a speed, no energy."""
    from dataclasses import replace

    from whichgpu.estimate.energy import energy_of

    est = answer.estimate
    if est is None or not gpu.tdp_watts:
        if power_cap is not None and est is not None:
            energy_of(est, gpu, count, power_cap)  # says why a cap cannot be applied
        return answer, None
    energy, rates, times = energy_of(est, gpu, count, power_cap)
    if power_cap is not None:
        answer = SpeedAnswer(answer.workload, answer.gpu_id, answer.count,
                             est=replace(est, rates=rates, times=times))
    return answer, energy


def _mixed_or_same(q: Q, ctx: Context) -> Q | MixedCardsAnswer:
    """A ``--gpu`` list: the mixed-cards answer, or, when every card is the same and no split
    is asked, the request as ``--gpu NAME`` with the count (so that 2xrtx-3090 answers as
    ``--gpu rtx-3090 --count 2``); one card: the request as it is."""
    from whichgpu.catalog.gpu_list import all_same, is_gpu_list

    if not is_gpu_list(q.gpu) and q.split_mode is None and not q.tensor_split:
        return q  # one card (the mixed cards' checks and model load only for a list)
    from whichgpu.answers.mixed import cards_of, mixed

    cards = cards_of(q)
    if cards is None:
        return q
    if all_same(cards) and q.split_mode is None and not q.tensor_split:
        field = "gpus" if isinstance(q, Memory) else "count"
        return q.model_copy(update={"gpu": cards[0].id, field: len(cards)})
    return mixed(q, cards, ctx)


def recommend_workload(q: Recommend, ctx: Context = LOCAL) -> Job:
    """The workload of a recommendation (``--sampling-steps`` are its diffusion steps)."""
    return workload(q, ctx, steps=q.sampling_steps)
