"""FP8 weights beside a 16-bit serving answer on a card with FP8 tensor cores (flaws8 6).

A serving recommendation that names no weight format answers with the checkpoint's own 16-bit
weights. On H100, H200, B200 or MI300X the 2026 serving recipes load FP8 instead: vLLM's FP8
gives "a 2x reduction in model memory requirements and up to a 1.6x improvement in
throughput with minimal impact on accuracy" (https://docs.vllm.ai/en/latest/features/
quantization/fp8.html), and publishers ship FP8 checkpoints (nvidia/Llama-3.3-70B-Instruct-FP8,
used by the vLLM Neuron Llama 3.3 70B tutorial). The default does not change (a format is the
user's accuracy choice); the answer says what the same card would do with FP8 weights, from
the same recommender asked again for that card with ``quant=fp8``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whichgpu.messages import Field, Message, msg
from whichgpu.vocabulary import WorkKind

FP8_SOURCE = "https://docs.vllm.ai/en/latest/features/quantization/fp8.html"


def fp8_alternative(q: Any, ctx: Any, w: Any, rec: Any,
                    recommend: Callable[..., Any]) -> Message | None:
    """What the winning card does with FP8 weights, for a serving job that named no format
    and runs 16-bit weights on a card with FP8 tensor cores under a serving engine (None
    otherwise, or when FP8 does not run there); ``recommend`` answers the request again
    (answers/advice.py's recommend_job, handed in: this module is below it)."""
    from whichgpu.engines import has

    best = rec.best
    if (best is None or q.quant is not None or rec.job.kind != WorkKind.SERVING
            or not w.quant_format.is_16bit or not best.gpu.supports("fp8")
            or not has(str(w.engine_name), "continuous_batching")):
        return None
    from whichgpu.errors import WhichGPUError

    try:
        again = recommend(q.model_copy(update={
            "quant": "fp8", "only": best.gpu.id, "vs_api": False, "export": None,
            "disaggregate": False}), ctx)
    except WhichGPUError:
        return None
    fp8 = again.rec.best
    if fp8 is None:
        return None
    from whichgpu.advise.explain import name

    return msg("change.fp8_weights", "With FP8 weights ({flag}; half the weight memory, up to "
               "1.6x the throughput at minimal accuracy loss, {source}): {label} at {price} "
               "per hour, {rate:,.1f} tokens/s per user (now {now_price} per hour, "
               "{now_rate:,.1f} tokens/s per user at {quant})", flag=Field("quant", "fp8"),
               source=FP8_SOURCE, label=name(fp8), price=fp8.cost.typical,
               rate=fp8.rate.typical, now_price=best.cost.typical, now_rate=best.rate.typical,
               quant=w.quant_format.name)
