"""The engine that would run a job the chosen engine cannot fit, beside the speed answer's
"does not fit": llama.cpp with part of the model in host RAM, and its speed.

A job that names no engine gets the one its format picks (MXFP4, FP8, AWQ: vLLM), which keeps
every weight on the GPU. When that does not fit the cards asked, whichgpu answers with
llama.cpp's offload only if the host RAM is given (``estimates.with_llamacpp``: without it the
host cannot be checked to hold the spilled part). Otherwise the answer stays "does not fit" for
that engine, and this says the alternative people run (llama.cpp's ``--n-cpu-moe`` / ``-ngl``
layout), its estimated speed, and how to ask for it (estimate/memory/offload_alternative.py).
"""

from __future__ import annotations

from typing import Any

from whichgpu.answers.context import Context
from whichgpu.answers.requests import Workload
from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate.memory.offload_alternative import (
    OffloadAlternative,
    alternative_for,
    could_offload,
)
from whichgpu.estimate.workload import Workload as Job
from whichgpu.vocabulary import Engine


def offload_alternative(q: Workload, ctx: Context, w: Job, gpu: GPU, count: int, *,
                        profile: Any = None) -> OffloadAlternative | None:
    """llama.cpp's offload of ``w`` on ``count`` x ``gpu`` when the request named no engine,
    the engine chosen cannot keep weights in host RAM and llama.cpp runs the job's format
    (None otherwise, or when no layout fits the cards)."""
    if q.engine is not None or not could_offload(w):
        return None
    from whichgpu.answers.inputs.from_request import workload

    try:  # the request again, as --engine llamacpp asks it (the same figures)
        spill = workload(q, ctx, gpus=count, engine=Engine.LLAMACPP)
    except InputError:
        return None
    return alternative_for(spill, w, gpu, count, profile)
