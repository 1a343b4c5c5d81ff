"""llama.cpp with part of the model in host RAM, for a job whose engine (picked because none
was named: vLLM for MXFP4, FP8, AWQ) keeps every weight on the GPU and does not fit the cards:
its layout (offload_plan, as ``whichgpu memory`` lays it out), its speed, and how to ask for it.

The speed answer says it beside "does not fit" (answers/offload_hint.py); a recommendation that
nothing runs says it for the size nearest to fitting (advise/recommend.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.catalog.gpus import GPU
from whichgpu.engines import label
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload as Job
from whichgpu.messages import Field, Message, msg
from whichgpu.units import GB
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
        host = self.plan.workload.host_spec  # as given, else the stated default (host.py)
        then = msg("offload.alternative.ask", "give the host RAM ({ram}) to have it answered",
                   ram=Field("host_ram"))
        return msg("offload.alternative", "{engine} (picked as no engine was named) keeps "
                   "every weight on the GPU, so the job does not fit as asked; llama.cpp "
                   "({flag}) would run it with part of the model in host RAM: {plan}; "
                   "decode about {typical:,.1f} ({low:,.1f}-"
                   "{high:,.1f}) tokens/s per sequence with {memory} system RAM ({bw:,.0f} GB/s "
                   "peak); {then}", engine=label(self.instead_of),
                   flag=Field("engine", str(self.engine)), plan=self.plan.describe(),
                   typical=decode.typical, low=decode.low, high=decode.high,
                   memory=host.memory, bw=host.bandwidth_bytes_per_s / GB, then=then)

    def to_json(self) -> dict[str, Any]:
        return {"engine": str(self.engine), "instead_of": self.instead_of,
                "settings": self.settings(), "plan": self.plan.to_json(),
                "host": self.plan.workload.host_spec.to_json(),
                **{k: r.to_json() for k, r in self.rates.items()},
                "description": str(self.describe())}


def llamacpp_alternative(w: Job, gpu: GPU, count: int, *, profile: Any = None
                         ) -> OffloadAlternative | None:
    """llama.cpp's offload of ``w`` on ``count`` x ``gpu`` when ``w`` named no engine, the
    engine chosen cannot keep weights in host RAM and llama.cpp has a file of its format
    (None otherwise, or when no layout fits the cards)."""
    if w.engine is not None or not could_offload(w):
        return None
    return alternative_for(w.with_(engine=Engine.LLAMACPP), w, gpu, count, profile)


def runs_format(w: Job) -> bool:
    """Whether llama.cpp has a file of the job's weight format (a GGUF type, a plain dtype,
    gpt-oss's MXFP4): not AWQ, GPTQ, FP8, NVFP4 or EXL2 checkpoints."""
    from whichgpu.estimate.memory.weights import gguf_ftype

    return gguf_ftype(w.quant_format, str(Engine.LLAMACPP)) is not None


def could_offload(w: Job) -> bool:
    from whichgpu.estimate.memory.offload_plan import supports_offload

    return (w.task == Task.INFERENCE and not w.is_diffusion and not supports_offload(w)
            and runs_format(w))


def alternative_for(spill: Job, w: Job, gpu: GPU, count: int, profile: Any
                 ) -> OffloadAlternative | None:
    from whichgpu.estimate.memory.offload_plan import offload_plan
    from whichgpu.estimate.speed import estimate_speed

    plan = offload_plan(spill, gpu, count)
    if plan is None or not plan.host_ok:  # as the speed answer: none, or more than the host
        return None  # RAM holds (given, or the stated default's)
    try:
        est = estimate_speed(plan.workload, gpu, count, profile=profile, saturation=False)
    except InputError:  # DoesNotFit is one: the layout leaves no room after all
        return None
    rates: dict[str, Any] = {k: est.rates[k] for k in ("decode_tokens_per_s_per_sequence",
                                                       "prefill_tokens_per_s")
                             if k in est.rates}
    if "decode_tokens_per_s_per_sequence" not in rates:
        return None
    return OffloadAlternative(Engine.LLAMACPP, w.engine_name, plan, rates)
