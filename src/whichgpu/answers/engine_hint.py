"""A clearly faster engine beside a speed answer whose engine was picked by default (flaws8 4).

A job that names no engine runs on the one its format picks (vLLM for safetensors formats).
On some cards another engine whichgpu models decodes one stream much faster: on the DGX Spark
(GB10) llama.cpp runs gpt-oss-120b at 59.0 tok/s (tg32, llama.cpp benches/dgx-spark.md)
where vLLM 26.02 runs it at 33.5 (NVIDIA/dgx-spark-playbooks#79); both rows are in
validation/speed.csv. The default stays (vLLM's CUTLASS MXFP4 path reaches 59.5 on the same
card, spark-arena/recipe-registry#17, so the engine's build decides, not the card), but the
answer says the faster engine with its estimate, as the offload alternative does.

"Clearly faster" is the estimate's own range: the other engine's typical rate lies above the
default's high end (its 80 % interval). Only engines that run on the card's platform, read the
job's weight format (``reads_format``), have calibration rows of the model's family on their
own decode and a range measured on this class of card are compared; one sequence at a time
only (the single-user decode the rows measure).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.answers.context import Context
from whichgpu.answers.requests import Workload
from whichgpu.catalog.gpus import GPU
from whichgpu.errors import WhichGPUError
from whichgpu.estimate.workload import Workload as Job
from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import Engine, Task

RATE = "decode_tokens_per_s_per_sequence"


@dataclass(frozen=True)
class FasterEngine:
    """An engine whose estimate for the same job is above the default engine's range."""

    engine: Engine
    instead_of: str
    rate: Any  # units.Range: decode tokens/s per sequence
    default_rate: Any  # units.Range: the default engine's

    def describe(self) -> Message:
        from whichgpu.engines import label

        return msg("engine.faster", "{engine} would decode faster on this card: about "
                   "{typical:,.1f} ({low:,.1f}-{high:,.1f}) tokens/s per sequence against "
                   "{default}'s {base:,.1f} ({base_low:,.1f}-{base_high:,.1f}), picked as no "
                   "engine was named ({flag})", engine=label(str(self.engine)),
                   typical=self.rate.typical, low=self.rate.low, high=self.rate.high,
                   default=label(self.instead_of), base=self.default_rate.typical,
                   base_low=self.default_rate.low, base_high=self.default_rate.high,
                   flag=Field("engine", str(self.engine)))

    def to_json(self) -> dict[str, Any]:
        return {"engine": str(self.engine), "instead_of": self.instead_of,
                RATE: self.rate.to_json(), "default": {RATE: self.default_rate.to_json()},
                "description": str(self.describe())}


def faster_engine(q: Workload, ctx: Context, w: Job, gpu: GPU, count: int, estimate: Any, *,
                  profile: Any = None) -> FasterEngine | None:
    """The fastest engine above the default's range for ``w`` on ``count`` x ``gpu`` (None
    when an engine was named, the job is not one stream of LLM decode, or none is)."""
    if q.engine is not None or w.task != Task.INFERENCE or w.is_diffusion or w.batch != 1:
        return None
    base = estimate.rates.get(RATE) if estimate is not None else None
    if base is None:
        return None
    used = str(estimate.engine)  # the engine the answer ran on (a platform may swap it)
    best: FasterEngine | None = None
    for engine in _candidates(w, gpu, used):
        if not _same_footing(used, str(engine), gpu):
            continue
        rate = _rate(q, ctx, engine, gpu, count, profile)
        if rate is None or rate.typical <= base.high:
            continue
        if best is None or rate.typical > best.rate.typical:
            best = FasterEngine(engine, used, rate, base)
    return best


def _same_footing(used: str, engine: str, gpu: GPU) -> bool:
    """False when the default engine's efficiency on this architecture was fitted on its own
    rows (speed_constants.toml ``engine_arch_factor``: vLLM on CDNA 3 at 0.5, from its MI300X
    rows) and the other engine's was not: the other's figure would be an NVIDIA fit carried
    over, compared with a measured one."""
    from whichgpu.estimate.constants import speed_value
    from whichgpu.estimate.speed.hardware import arch_key

    table = speed_value("engine_arch_factor")
    arch = arch_key(gpu)
    return f"{used}/{arch}" not in table or f"{engine}/{arch}" in table


def reads_format(engine: Engine, quant: Any) -> bool:
    """Whether ``engine`` loads weights of this format: a GGUF engine its GGUF files
    (engines/<engine>.py ``gguf_file_type``), an engine picked by a format its own format
    (ExLlamaV2: EXL2), a continuous-batching server the safetensors formats no other engine
    is picked by (FP8, AWQ, GPTQ, NVFP4, MXFP4, 16-bit); the others (MLC's own formats,
    transformers) are not compared."""
    from whichgpu.engines import has, module, picked_engine, traits
    from whichgpu.estimate.memory.weights import gguf_ftype

    name = quant.name.lower()
    if getattr(module(engine), "gguf_file_type", None) is not None:
        return gguf_ftype(quant, str(engine)) is not None
    own = traits(engine).picked_for_quant
    if own:
        return name.startswith(own)
    return has(engine, "continuous_batching") and picked_engine(name) is None


def _candidates(w: Job, gpu: GPU, used: str) -> list[Engine]:
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.engines import engine_table
    from whichgpu.estimate.speed.result import evidence, speed_family

    runs = default_catalog().engines_for(gpu) or ()
    family = speed_family(w.model)
    return [e for e, t in engine_table().items()
            if e != used and e in runs and "llm" in t.families
            and reads_format(e, w.quant_format)
            # calibration rows of this model family on the engine's own decode
            and evidence("decode", family, e)[0] >= 2]


def _rate(q: Workload, ctx: Context, engine: Engine, gpu: GPU, count: int,
          profile: Any) -> Any:
    from whichgpu.answers.inputs.from_request import workload
    from whichgpu.estimate.speed import estimate_speed
    from whichgpu.estimate.speed.result import band_evidence, band_key

    try:  # the request again, as --engine <engine> asks it (the same figures)
        other = workload(q, ctx, gpus=count, engine=engine)
        est = estimate_speed(other, gpu, count, profile=profile, saturation=False)
    except WhichGPUError:  # does not fit, or the engine refuses this job
        return None
    # its range must rest on measurements of the engine on this class of card (the range
    # group category/engine/hardware class at least), not on other hardware's
    group, _n = band_evidence(band_key("decode", str(engine), gpu, other.quant_format))
    if group.count("/") < 2:
        return None
    return est.rates.get(RATE)
