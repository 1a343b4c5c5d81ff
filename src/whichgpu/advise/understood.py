"""The work an answer understood, said back: the amount and its unit, what one image or video
is (resolution, frames, sampling steps), the context per sequence, the precision and the
engine, each marked as asked or as the default taken (issue 26).

``understood(job)`` gives one sentence (a message, said in the reader's language) and the
same values typed, for the JSON's ``assumptions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.messages import Join, Message, msg
from whichgpu.vocabulary import WorkKind

if TYPE_CHECKING:
    from whichgpu.advise.job import Job

#: the unit each kind of work is counted in (the JSON's ``unit``)
UNITS = {WorkKind.TOKENS: "tokens", WorkKind.DAILY: "tokens per day",
         WorkKind.IMAGES: "images", WorkKind.VIDEOS: "videos",
         WorkKind.STEPS: "training steps", WorkKind.TRAIN_TOKENS: "training tokens",
         WorkKind.SERVING: "users", WorkKind.RATE: "requests per second"}


@dataclass(frozen=True)
class Assumed:
    """One value the answer rests on: its name, value, unit and whether it was asked."""

    name: str
    value: Any
    unit: str | None = None
    asked: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit,
                "source": "asked" if self.asked else "default"}


def assumed(job: Job) -> list[Assumed]:
    """The values the answer rests on, typed."""
    w = job.workload
    out: list[Assumed] = []
    if job.kind in UNITS:
        amount = (job.requests_per_s if job.kind == WorkKind.RATE else
                  job.users if job.kind == WorkKind.SERVING else job.amount)
        out.append(Assumed("amount", amount, UNITS[job.kind]))
    if job.kind == WorkKind.SERVING:
        out.append(Assumed("tokens_per_s_each", job.tokens_per_s_each, "tokens/s"))
    if w.is_diffusion:
        d = w.model.diffusion
        width, height = w.image_size
        out.append(Assumed("resolution", f"{width}x{height}", "pixels", w.resolution is not None))
        steps = w.steps or (d.default_steps if d else None)
        out.append(Assumed("sampling_steps", steps, "steps", w.steps is not None))
        if d is not None and d.is_video:
            out.append(Assumed("frames", w.video_frames, "frames", w.frames is not None))
        out.append(Assumed("cfg_passes", w.cfg_passes, "passes per step", w.cfg is not None))
    else:
        out.append(Assumed("context_tokens", w.seq_len, "tokens per sequence",
                           w.context is not None))
        if not w.is_training and (w.prompt_tokens or w.output_tokens):
            out.append(Assumed("prompt_tokens", w.prompt_tokens, "tokens"))
            out.append(Assumed("output_tokens", w.output_tokens, "tokens"))
    out.append(Assumed("precision", w.quant_name, None, w.quant is not None))
    if w.is_training:
        out.append(Assumed("framework", w.framework or "default", None, w.framework is not None))
    else:
        out.append(Assumed("engine", w.engine_name, None, w.engine is not None))
        if w.lora_adapters:
            out.append(Assumed("lora_adapters", w.lora_adapters, "adapters"))
        if w.speculative is not None:
            out.append(Assumed("speculative", str(w.speculative.method), None))
            out.append(Assumed("draft_tokens", w.speculative.draft_tokens,
                               "tokens per verify step", w.speculative.draft_tokens_asked))
    return out


def understood(job: Job) -> Message:
    """The work understood, in one sentence: 'Understood: 1,000 images, each 1024x1024 at 28
    sampling steps; bf16, engine diffusers.'"""
    w = job.workload
    # the ranking is the title's to say (job.describe() names it when no amount is given)
    work = (msg("understood.no_amount", "no amount of work given")
            if job.kind is WorkKind.NONE else job.describe())
    if w.is_diffusion:
        values = {a.name: a.value for a in assumed(job)}
        d = w.model.diffusion
        if d is not None and d.is_video:
            each = msg("understood.video", "each {resolution} pixels, {frames} frames, at "
                       "{steps} sampling steps", resolution=values["resolution"],
                       frames=values["frames"], steps=values["sampling_steps"])
        else:
            each = msg("understood.image", "each {resolution} pixels at {steps} sampling "
                       "steps", resolution=values["resolution"], steps=values["sampling_steps"])
        return msg("understood.diffusion", "Understood: {work}, {each}; {precision}, engine "
                   "{engine}.", work=work, each=each, precision=w.quant_name,
                   engine=w.engine_name)
    if w.is_training:
        return msg("understood.training", "Understood: {work} ({task}), sequences of "
                   "{context:,} tokens; {precision}.", work=work, task=w.task,
                   context=w.seq_len, precision=w.quant_name)
    if w.lora_adapters:  # many adapters on one base: said, as they cost memory and speed
        extra = [msg("understood.lora", "{n:,} LoRA adapter(s) of rank {rank}",
                     n=w.lora_adapters, rank=w.lora_rank)]
        if w.speculative is not None:
            extra.append(w.speculative.describe())
        return msg("understood.inference.extra", "Understood: {work}, {context:,} tokens of "
                   "context per sequence; {precision}, engine {engine}, {extra}.", work=work,
                   context=w.seq_len, precision=w.quant_name, engine=w.engine_name,
                   extra=Join(extra))
    if w.speculative is not None:
        return msg("understood.inference.speculative", "Understood: {work}, {context:,} tokens "
                   "of context per sequence; {precision}, engine {engine}, {speculative}.",
                   work=work, context=w.seq_len, precision=w.quant_name,
                   engine=w.engine_name, speculative=w.speculative.describe())
    return msg("understood.inference", "Understood: {work}, {context:,} tokens of context per "
               "sequence; {precision}, engine {engine}.", work=work, context=w.seq_len,
               precision=w.quant_name, engine=w.engine_name)
