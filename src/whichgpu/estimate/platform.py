"""Which engine a job runs with on a card: the catalog says which engines run where.

An engine the user named that does not run on the card is refused with the reason ("vLLM
does not run on Apple silicon (Metal); llama.cpp or MLX do"); a default engine that does not
run there is swapped for one that does, and the swap is said, never priced silently.
"""

from __future__ import annotations

from whichgpu.catalog.gpus import ENGINE_LABELS, GPU, Catalog, default_catalog
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload

# What a user runs instead of a default engine the card lacks, most common first.
_FALLBACKS = {
    "inference": ("llamacpp", "vllm", "mlc", "transformers"),
    "training": ("transformers",),
    "diffusion": ("diffusers", "comfyui"),
}


class EngineUnavailable(InputError):
    """The engine named for a job does not run on the card."""

    def __init__(self, gpu: GPU, engine: str, why: str) -> None:
        self.gpu, self.engine = gpu, engine
        super().__init__(f"{gpu.id}: {why} (--engine)")


def engine_problem(w: Workload, gpu: GPU, catalog: Catalog | None = None) -> str | None:
    """Why the job's engine (named or default) cannot run on ``gpu``; None when it can."""
    return (catalog or default_catalog()).engine_problem(gpu, w.engine_name)


def engine_for(w: Workload, gpu: GPU, catalog: Catalog | None = None,
               ) -> tuple[Workload, str | None]:
    """``w`` with an engine that runs on ``gpu``, and a note when the default was swapped.

    Raises :class:`EngineUnavailable` when the user named an engine the card cannot run.
    """
    catalog = catalog or default_catalog()
    why = catalog.engine_problem(gpu, w.engine_name)
    if why is None:
        return w, None
    if w.engine is not None:
        raise EngineUnavailable(gpu, w.engine, why)
    kind = "diffusion" if w.is_diffusion else "training" if w.is_training else "inference"
    runs = catalog.engines_for(gpu) or ()
    for engine in _FALLBACKS[kind]:
        if engine in runs:
            label = ENGINE_LABELS.get(engine, engine)
            return w.with_(engine=engine), f"{why}: estimated with {label} (--engine {engine})"
    raise EngineUnavailable(gpu, w.engine_name, why)
