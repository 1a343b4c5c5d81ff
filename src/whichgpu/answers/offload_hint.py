"""The engine that would run a job the chosen engine cannot fit: llama.cpp with part of the
model in host RAM, and its speed.

A job that names no engine gets the one its format picks (MXFP4, FP8, AWQ: vLLM), which keeps
every weight on the GPU. When that does not fit the cards asked, whichgpu answers with
llama.cpp's offload only if the host RAM is given (``estimates.with_llamacpp``: without it the
host cannot be checked to hold the spilled part). Otherwise the answer stays "does not fit" for
that engine, and this says the alternative people run (llama.cpp's ``--n-cpu-moe`` / ``-ngl``
layout, as ``whichgpu memory`` lays it out), its estimated speed, and how to ask for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.answers.context import Context
from whichgpu.answers.requests import Workload
from whichgpu.catalog.gpus import GPU
from whichgpu.engines import label
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload as Job
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import Engine, Task


@dataclass(frozen=True)
class OffloadAlternative:
    """llama.cpp's offload layout of a job the chosen engine cannot fit, with its speed."""

    engine: Engine  # the engine that would run it (llama.cpp)
    instead_of: str  # the engine the job was answered for
    plan: Any  # estimate/memory/offload_plan.OffloadPlan
    rates: dict[str, Any]  # decode per sequence and prefill, low / typical / high (Range)

    def settings(self) -> dict[str, Any]:
        """The request fields that ask for this answer."""
        return {"engine": str(self.engine), **dict(self.plan.settings())}

    def describe(self) -> Message:
        decode = self.rates["decode_tokens_per_s_per_sequence"]
        then = (msg("offload.alternative.ask", "give the host RAM ({ram}) to have it answered",
                    ram=Field("host_ram")) if self.plan.host_ok else
                msg("offload.alternative.short", "the host RAM given is too small for it"))
        return msg("offload.alternative", "{engine} (picked as no engine was named) keeps "
                   "every weight on the GPU, so the job does not fit as asked; llama.cpp "
                   "({flag}) would run it with part of the model in host RAM: {plan}; "
                   "decode about {typical:,.0f} ({low:,.0f}-"
                   "{high:,.0f}) tokens/s per sequence; {then}", engine=label(self.instead_of),
                   flag=Field("engine", str(self.engine)), plan=self.plan.describe(),
                   typical=decode.typical, low=decode.low, high=decode.high, then=then)

    def to_json(self) -> dict[str, Any]:
        return {"engine": str(self.engine), "instead_of": self.instead_of,
                "settings": self.settings(), "plan": self.plan.to_json(),
                **{k: r.to_json() for k, r in self.rates.items()},
                "description": str(self.describe())}


def offload_alternative(q: Workload, ctx: Context, w: Job, gpu: GPU, count: int, *,
                        profile: Any = None) -> OffloadAlternative | None:
    """llama.cpp's offload of ``w`` on ``count`` x ``gpu`` when the request named no engine,
    the engine chosen cannot keep weights in host RAM and llama.cpp runs the job's format
    (None otherwise, or when no layout fits the cards)."""
    from whichgpu.estimate.memory.offload_plan import offload_plan, supports_offload
    from whichgpu.estimate.speed import estimate_speed

    if q.engine is not None or w.task != Task.INFERENCE or w.is_diffusion \
            or supports_offload(w):
        return None
    from whichgpu.answers.inputs.from_request import workload

    try:
        spill = workload(q, ctx, gpus=count, engine=Engine.LLAMACPP)
    except InputError:  # llama.cpp does not run this format (an AWQ checkpoint, ...)
        return None
    plan = offload_plan(spill, gpu, count)
    if plan is None:
        return None
    try:
        est = estimate_speed(plan.workload, gpu, count, profile=profile, saturation=False)
    except InputError:  # DoesNotFit is one: the layout leaves no room after all
        return None
    rates = {k: est.rates[k] for k in ("decode_tokens_per_s_per_sequence",
                                        "prefill_tokens_per_s") if k in est.rates}
    if "decode_tokens_per_s_per_sequence" not in rates:
        return None
    return OffloadAlternative(Engine.LLAMACPP, w.engine_name, plan, rates)
