"""whichgpu: which GPU to rent or buy for an AI job, what it will cost, and how sure that is.

The public, typed Python API (``py.typed`` ships). The engine, one step at a time::

    import whichgpu

    spec = whichgpu.resolve_model("llama-3.1-8b")          # a preset, Hub id, config or size
    w = whichgpu.build_workload(spec, task="inference", quant="q4_k_m", context=8192)
    mem = whichgpu.estimate_memory(w)                       # terms, total, in bytes
    speed = whichgpu.estimate_speed(w, whichgpu.get_gpu("rtx-4090"))   # low/typical/high
    offers = whichgpu.current_offers().offers               # dated prices
    job = whichgpu.build_job(w, tokens="10M")
    rec = whichgpu.recommend(job, list(offers))             # ranked options, reasons

or one whole question, as the command line and the REST API ask it (a request model in,
a typed answer with ``to_json()`` out)::

    answer = whichgpu.answers.recommend(whichgpu.requests.Recommend(model="llama-3.1-8b",
                                                                    tokens="10M"))

Names are imported on first use, so ``import whichgpu`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time they load on first use
    from whichgpu import answers
    from whichgpu.advise.job import Job
    from whichgpu.advise.options import Recommendation
    from whichgpu.advise.recommend import recommend, recommend_for_rate
    from whichgpu.answers import requests
    from whichgpu.answers.inputs.job import build_job
    from whichgpu.answers.inputs.ownership import cost as run_cost
    from whichgpu.answers.inputs.ownership import tco
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.catalog.gpus import GPU, default_catalog, get_gpu, resolve_gpu
    from whichgpu.catalog.offers import Offer
    from whichgpu.catalog.prices import OfferSelection, current_offers
    from whichgpu.cost.task import task_cost
    from whichgpu.errors import InputError, NotFoundError, WhichGPUError
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.speed import estimate_speed
    from whichgpu.estimate.workload import Workload
    from whichgpu.messages import Message
    from whichgpu.models.resolve import resolve_model
    from whichgpu.models.spec import ModelSpec

# public name -> the module that defines it (a module itself where the value is None)
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "resolve_model": ("whichgpu.models.resolve", "resolve_model"),
    "ModelSpec": ("whichgpu.models.spec", "ModelSpec"),
    "build_workload": ("whichgpu.answers.inputs.workload", "build_workload"),
    "Workload": ("whichgpu.estimate.workload", "Workload"),
    "estimate_memory": ("whichgpu.estimate.memory", "estimate_memory"),
    "estimate_speed": ("whichgpu.estimate.speed", "estimate_speed"),
    "GPU": ("whichgpu.catalog.gpus", "GPU"),
    "get_gpu": ("whichgpu.catalog.gpus", "get_gpu"),
    "resolve_gpu": ("whichgpu.catalog.gpus", "resolve_gpu"),
    "default_catalog": ("whichgpu.catalog.gpus", "default_catalog"),
    "Offer": ("whichgpu.catalog.offers", "Offer"),
    "OfferSelection": ("whichgpu.catalog.prices", "OfferSelection"),
    "current_offers": ("whichgpu.catalog.prices", "current_offers"),
    "task_cost": ("whichgpu.cost.task", "task_cost"),
    # not "cost": that is the package whichgpu.cost, which would replace the function as soon
    # as any whichgpu.cost.* module loads
    "run_cost": ("whichgpu.answers.inputs.ownership", "cost"),
    "tco": ("whichgpu.answers.inputs.ownership", "tco"),
    "Job": ("whichgpu.advise.job", "Job"),
    "build_job": ("whichgpu.answers.inputs.job", "build_job"),
    "recommend": ("whichgpu.advise.recommend", "recommend"),
    "Recommendation": ("whichgpu.advise.options", "Recommendation"),
    "recommend_for_rate": ("whichgpu.advise.recommend", "recommend_for_rate"),
    "Message": ("whichgpu.messages", "Message"),
    "WhichGPUError": ("whichgpu.errors", "WhichGPUError"),
    "InputError": ("whichgpu.errors", "InputError"),
    "NotFoundError": ("whichgpu.errors", "NotFoundError"),
    "answers": ("whichgpu.answers", None),
    "requests": ("whichgpu.answers.requests", None),
}

__all__ = [
    "GPU", "InputError", "Job", "Message", "ModelSpec", "NotFoundError", "Offer",
    "OfferSelection", "Recommendation", "WhichGPUError", "Workload", "answers", "build_job",
    "build_workload", "current_offers", "default_catalog", "estimate_memory",
    "estimate_speed", "get_gpu", "recommend", "recommend_for_rate", "requests", "resolve_gpu",
    "resolve_model", "run_cost", "task_cost", "tco",
]
assert sorted(__all__) == sorted(_EXPORTS)  # one list of the public names


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562)."""
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'whichgpu' has no attribute {name!r}") from None
    value = import_module(module) if attr is None else getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
